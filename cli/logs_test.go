package cli_test

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

// The logs of `bread start` over the built binary: --log-format json (or
// BREAD_LOG_FORMAT=json) writes one JSON object a line on standard error; a
// streaming route's line about a run names it by run_id, session_id and
// agent_id, as the engine's lines do; --log-level (or BREAD_LOG_LEVEL)
// drops the lines below the level.

// abandonDetachedRun starts a detached streaming run, goes away after its
// first frame, follows the run to its end on GET /runs/{id}/stream, then
// stops the server with SIGTERM and waits for its exit, so every line the
// run caused is logged. It returns the run's start crumb.
func abandonDetachedRun(t *testing.T, p *serveProc) *core.CrumbBase {
	t.Helper()
	f := open(t, "POST", p.base+"/agents/echo/run", `{"input":"hi","detach":true}`)
	if f.resp.StatusCode != 200 {
		t.Fatalf("run = %d", f.resp.StatusCode)
	}
	fr, ok := f.next()
	if !ok || fr.Crumb.CrumbType() != core.TypeAgentRunStart {
		t.Fatalf("first frame %+v", fr)
	}
	start := fr.Crumb.Base()
	f.resp.Body.Close() // the client goes away; the detached run goes on
	open(t, "GET", p.base+"/runs/"+start.RunID+"/stream", "").until(core.TypeAgentRunEnd)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitExit(t, p, 15*time.Second)
	return start
}

// jsonLogLines parses every line of a finished process's standard error;
// each must be one JSON object.
func jsonLogLines(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(stderr, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("a log line is not JSON: %q", line)
		}
		out = append(out, m)
	}
	return out
}

func TestJSONLogsNameTheRunOfAStreamLine(t *testing.T) {
	for _, c := range []struct {
		name      string
		env, args []string
	}{
		{name: "flags", args: []string{"--log-format", "json", "--log-level", "debug"}},
		{name: "env", env: []string{"BREAD_LOG_FORMAT=json", "BREAD_LOG_LEVEL=debug"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := startServe(t, drainProject(t, 20), c.env, c.args...)
			start := abandonDetachedRun(t, p)
			var gone map[string]any
			levels := map[any]int{}
			for _, l := range jsonLogLines(t, p.logs.String()) {
				levels[l["level"]]++
				if msg, _ := l["msg"].(string); strings.Contains(msg, "stream client went away") {
					gone = l
				}
			}
			if gone == nil {
				t.Fatalf("no \"stream client went away\" line at debug level:\n%s", p.logs.String())
			}
			if gone["level"] != "DEBUG" || gone["run_id"] != start.RunID || gone["session_id"] != start.SessionID ||
				gone["agent_id"] != "echo" || start.SessionID == "" {
				t.Fatalf("the stream line %v, want DEBUG with run_id %s, session_id %s, agent_id echo", gone, start.RunID, start.SessionID)
			}
			for _, k := range []string{"runId", "sessionId", "agentId"} {
				if _, ok := gone[k]; ok {
					t.Fatalf("the stream line has %s beside run_id/session_id/agent_id: %v", k, gone)
				}
			}
			if levels["INFO"] == 0 {
				t.Fatalf("no INFO line at debug level: %v", levels)
			}
		})
	}
}

func TestLogLevelWarnDropsInfoAndDebug(t *testing.T) {
	for _, c := range []struct {
		name      string
		env, args []string
	}{
		{name: "flags", args: []string{"--log-format", "json", "--log-level", "warn"}},
		{name: "env", env: []string{"BREAD_LOG_FORMAT=json", "BREAD_LOG_LEVEL=warn"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := startServe(t, drainProject(t, 20), c.env, c.args...)
			abandonDetachedRun(t, p)
			lines := jsonLogLines(t, p.logs.String())
			warns := 0
			for _, l := range lines {
				switch l["level"] {
				case "WARN":
					warns++
				case "ERROR":
				default:
					t.Fatalf("a %v line at --log-level warn: %v", l["level"], l)
				}
			}
			// Serving on loopback without auth is a warning: the level
			// lets warnings through.
			if warns == 0 {
				t.Fatalf("no WARN line at --log-level warn:\n%s", p.logs.String())
			}
		})
	}
}
