package cli_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/cli"
)

// TestScheduleRunsAsItsIdentityOverTheBinary: with `bread start` and auth
// (session ownership on), a schedule with runAs runs as that identity: the
// session it names is created as ann's, so ann reads it and its runs,
// bob gets it as a missing session and her runs as 403, exactly as for a
// session and runs she started over HTTP. bread build refuses a runAs
// naming no server.auth strategy, at its line.
func TestScheduleRunsAsItsIdentityOverTheBinary(t *testing.T) {
	dir := project(t, map[string]string{
		"bread.yaml": `entrypoints: [chat]
store: {type: sqlite, path: ./bread.db}
workers: {concurrency: 2, pollInterval: 50ms}
server:
  auth:
    - {type: apikey, name: ann, header: X-Ann-Key, keys: [ann-key]}
    - {type: apikey, name: bob, header: X-Bob-Key, keys: [bob-key]}
schedules:
  - {name: ann-digest, every: 1s, agent: chat, input: digest, session: ann-digest, runAs: {strategy: ann, subject: api-key}}
`,
		"agents/chat/agent.yaml": "model: {provider: replay, model: t/chat.jsonl}\n",
		"agents/chat/prompt.md":  "Chat.",
		"t/chat.jsonl":           transcript("DIGEST"),
	})
	srv := startReplica(t, dir, nil)
	ann, bob := []string{"X-Ann-Key", "ann-key"}, []string{"X-Bob-Key", "bob-key"}
	var runs []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	waitFor(t, 20*time.Second, "a tick's run in ann's session, as ann sees it", func() bool {
		status, body := statusOf(t, "GET", srv.base+"/sessions/ann-digest/runs", "", ann...)
		return status == http.StatusOK && json.Unmarshal([]byte(body), &runs) == nil && len(runs) > 0 && runs[len(runs)-1].Status == "completed"
	})
	first := runs[len(runs)-1]
	if status, body := statusOf(t, "GET", srv.base+"/sessions/ann-digest/messages", "", ann...); status != http.StatusOK || !strings.Contains(body, "DIGEST") {
		t.Errorf("ann reads the schedule's session: %d %s", status, body)
	}
	for _, path := range []string{"/sessions/ann-digest", "/sessions/ann-digest/messages", "/sessions/ann-digest/runs"} {
		if status, body := statusOf(t, "GET", srv.base+path, "", bob...); status != http.StatusNotFound || !strings.Contains(body, "SESSION_NOT_FOUND") {
			t.Errorf("bob: GET %s = %d %s, want 404 SESSION_NOT_FOUND", path, status, body)
		}
	}
	if status, body := statusOf(t, "GET", srv.base+"/runs/"+first.ID, "", bob...); status != http.StatusForbidden {
		t.Errorf("bob reads the schedule's run: %d %s, want 403", status, body)
	}
	if status, body := statusOf(t, "GET", srv.base+"/runs/"+first.ID, "", ann...); status != http.StatusOK || !strings.Contains(body, `"startedBy"`) {
		t.Errorf("ann reads the schedule's run: %d %s", status, body)
	}

	bad := project(t, map[string]string{
		"bread.yaml":             "entrypoints: [chat]\nstore: memory\nschedules:\n  - name: x\n    every: 1h\n    agent: chat\n    runAs: {strategy: nobody, subject: s}\n",
		"agents/chat/agent.yaml": "model: {provider: replay, model: t/chat.jsonl}\n",
		"t/chat.jsonl":           transcript("x"),
	})
	if r := run(t, cli.Options{}, "build", "--cwd", bad); r.code != cli.ExitFailure || !strings.Contains(r.stderr, `bread.yaml:7: INVALID_CONFIG: schedule "x": runAs strategy "nobody" names no server.auth strategy`) {
		t.Errorf("build of a runAs naming no strategy: %+v", r)
	}
}
