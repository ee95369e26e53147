package cli_test

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" for the test's schema setup

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
)

// services returns the shared PostgreSQL and Redis of the machine, or skips
// (fails under BREAD_TEST_REQUIRE=1).
func services(t *testing.T) (pg, rd string) {
	t.Helper()
	pg, rd = os.Getenv("BREAD_TEST_POSTGRES_URL"), os.Getenv("BREAD_TEST_REDIS_URL")
	if pg == "" || rd == "" {
		msg := "BREAD_TEST_POSTGRES_URL and BREAD_TEST_REDIS_URL must both be set for the multi-replica test"
		if os.Getenv("BREAD_TEST_REQUIRE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return pg, rd
}

// freshSchema creates a schema for this test and returns a URL using it.
func freshSchema(t *testing.T, base string) string {
	t.Helper()
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "bread_cluster_" + hex.EncodeToString(b)
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = db.Exec("DROP SCHEMA " + schema + " CASCADE")
		db.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// replicaProc is one `bread start` process.
type replicaProc struct {
	cmd  *exec.Cmd
	base string
	logs *syncWriter
}

func startReplica(t *testing.T, dir string, env []string) *replicaProc {
	t.Helper()
	port := freePort(t)
	r := &replicaProc{base: "http://127.0.0.1:" + strconv.Itoa(port), logs: &syncWriter{w: &bytes.Buffer{}}}
	r.cmd = exec.Command(binary, "start", "-p", strconv.Itoa(port), "-H", "127.0.0.1", "--cwd", dir)
	r.cmd.Env = append(os.Environ(), env...)
	r.cmd.Stdout, r.cmd.Stderr = io.Discard, r.logs
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		if t.Failed() {
			t.Logf("replica %s logs:\n%s", r.base, r.logs.String())
		}
	})
	waitHTTP(t, r.base+"/agents")
	return r
}

// frames reads CrumbFrame lines from a streamed response.
type frames struct {
	t    *testing.T
	resp *http.Response
	sc   *bufio.Scanner
}

func open(t *testing.T, method, u, body string) *frames {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, u, rd)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	return &frames{t: t, resp: resp, sc: sc}
}

func (f *frames) next() (core.Frame, bool) {
	for f.sc.Scan() {
		if len(f.sc.Bytes()) == 0 {
			continue // heartbeat
		}
		fr, err := protocol.DecodeCrumbFrame(f.sc.Bytes())
		if err != nil {
			f.t.Errorf("bad frame %q: %v", f.sc.Bytes(), err) // Errorf: next also runs off the test goroutine
			return core.Frame{}, false
		}
		return fr, true
	}
	return core.Frame{}, false
}

// until reads frames until one of type typ, returning everything read.
func (f *frames) until(typ string) []core.Frame {
	f.t.Helper()
	var out []core.Frame
	for {
		fr, ok := f.next()
		if !ok {
			f.t.Fatalf("stream ended before %s; got %s", typ, kinds(out))
		}
		out = append(out, fr)
		if fr.Crumb.CrumbType() == typ {
			return out
		}
	}
}

func kinds(fs []core.Frame) string {
	var s []string
	for _, f := range fs {
		s = append(s, f.Crumb.CrumbType())
	}
	return strings.Join(s, ",")
}

// TestThreeReplicasShareRunsThroughPostgresAndRedis runs three `bread
// start` processes on one PostgreSQL schema and one Redis prefix: a run
// starts on A and is tailed on B (catch-up, then live); it suspends for a
// human and is resumed on C, and B follows the continuation to its end; a
// cancel sent to B stops a run on A; killing A mid-run ends B's tail with
// RUN_LOST.
func TestThreeReplicasShareRunsThroughPostgresAndRedis(t *testing.T) {
	pg, rd := services(t)
	dbURL := freshSchema(t, pg)
	prefix := "bread:cluster:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	files := map[string]string{
		"bread.yaml": `store: {type: postgres, url: "${DB_URL}"}
bus: {type: redis, url: "${REDIS_URL}", keyPrefix: "${PREFIX}", leaseTTL: 1s}
streams: {heartbeat: 200ms}
providers: {replay: {mode: conversation}}
`,
		"agents/publisher/agent.yaml":         "model: {provider: replay, model: t/publisher.jsonl}\n",
		"agents/publisher/tools/confirm.yaml": "type: human\nprompt: Publish?\n",
		"t/publisher.jsonl": `{"call":0,"type":"text-delta","delta":"Let me ask. ","delayMs":700}
{"call":0,"type":"tool-call","toolCallId":"h1","toolName":"human_confirm","input":{"post":"hello"},"delayMs":300}
{"call":0,"type":"finish","finishReason":"tool-calls"}
{"call":1,"type":"text-delta","delta":"Published ","delayMs":300}
{"call":1,"type":"text-delta","delta":"everywhere.","delayMs":300}
{"call":1,"type":"finish","finishReason":"stop"}
`,
		"agents/slow/agent.yaml": "model: {provider: replay, model: t/slow.jsonl}\n",
		"t/slow.jsonl": `{"call":0,"type":"text-delta","delta":"working","delayMs":10}
{"call":0,"type":"text-delta","delta":" forever","delayMs":600000}
{"call":0,"type":"finish","finishReason":"stop"}
`,
	}
	dir := project(t, files)
	// C reads the older spelling of the same wiring: transport: with a
	// nested bus means the same Redis bus and coordinator.
	files["bread.yaml"] = `store: {type: postgres, url: "${DB_URL}"}
transport: {type: httpchunked, heartbeat: 200ms, bus: {type: redis, url: "${REDIS_URL}", keyPrefix: "${PREFIX}", leaseTTL: 1s}}
providers: {replay: {mode: conversation}}
`
	legacy := project(t, files)
	env := []string{"DB_URL=" + dbURL, "REDIS_URL=" + rd, "PREFIX=" + prefix}
	a := startReplica(t, dir, env)
	b := startReplica(t, dir, env)
	c := startReplica(t, legacy, env)

	t.Run("start on A, tail on B, resume on C", func(t *testing.T) {
		run := open(t, "POST", a.base+"/agents/publisher/run", `{"input":"publish hello"}`)
		start, ok := run.next()
		if !ok || start.Crumb.CrumbType() != core.TypeAgentRunStart {
			t.Fatal("the run did not start on A")
		}
		tail := open(t, "GET", b.base+"/runs/"+start.RunID+"/stream", "")
		caught := tail.until(core.TypeHumanRequired)
		if caught[0].Crumb.CrumbType() != core.TypeAgentRunStart || !strings.Contains(kinds(caught), core.TypeTextDelta) {
			t.Fatalf("B catches up then follows live: %s", kinds(caught))
		}
		hr := caught[len(caught)-1].Crumb.(*core.HumanRequired)
		if got := kinds(run.until(core.TypeHumanRequired)); !strings.HasSuffix(got, core.TypeHumanRequired) {
			t.Fatalf("A's stream ends at human:required: %s", got)
		}
		resumed := open(t, "POST", c.base+"/resume/"+hr.CheckpointID, `{"response":{"ok":true}}`).until(core.TypeAgentRunEnd)
		if resumed[0].Crumb.CrumbType() != core.TypeHumanResumed || resumed[0].Seq <= hr.Seq {
			t.Fatalf("C's continuation starts with human:resumed and extends the seq: %s seq %d", kinds(resumed), resumed[0].Seq)
		}
		rest := tail.until(core.TypeAgentRunEnd)
		end := rest[len(rest)-1].Crumb.(*core.AgentRunEnd)
		if out, _ := json.Marshal(end.Output); string(out) != `"Published everywhere."` || !strings.HasPrefix(kinds(rest), core.TypeHumanResumed) {
			t.Fatalf("B follows the continuation from C: %s, output %s", kinds(rest), out)
		}
		if _, more := tail.next(); more {
			t.Fatal("B's tail closes after agent:run:end")
		}
	})

	t.Run("a cancel sent to B stops a run on A", func(t *testing.T) {
		run := open(t, "POST", a.base+"/agents/slow/run", `{"input":"go"}`)
		start, _ := run.next()
		run.until(core.TypeTextDelta)
		resp, err := http.Post(b.base+"/runs/"+start.RunID+"/cancel", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("cancel on B: HTTP %d", resp.StatusCode)
		}
		got := run.until(core.TypeAgentError)
		if ae := got[len(got)-1].Crumb.(*core.AgentError); ae.Error.Code != core.CodeRunCancelled {
			t.Fatalf("A's run ends with %+v", ae.Error)
		}
	})

	t.Run("killing A ends the tails on B and C with RUN_LOST", func(t *testing.T) {
		run := open(t, "POST", a.base+"/agents/slow/run", `{"input":"go"}`)
		start, _ := run.next()
		run.until(core.TypeTextDelta)
		tails := map[string]*frames{
			"B": open(t, "GET", b.base+"/runs/"+start.RunID+"/stream", ""),
			"C": open(t, "GET", c.base+"/runs/"+start.RunID+"/stream", ""),
		}
		for _, tail := range tails {
			tail.until(core.TypeTextDelta)
		}
		if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for name, tail := range tails {
			last := make(chan core.Frame, 1)
			go func() {
				var fr core.Frame
				for {
					next, ok := tail.next()
					if !ok {
						break
					}
					fr = next
				}
				last <- fr
			}()
			select {
			case fr := <-last:
				ae, ok := fr.Crumb.(*core.AgentError)
				if !ok || ae.Error.Code != core.CodeRunLost {
					t.Fatalf("%s's tail ends with %#v, want agent:error RUN_LOST", name, fr.Crumb)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%s's tail hangs after A died", name)
			}
		}
	})
}
