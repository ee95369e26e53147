package cli_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/cli"
	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine"
)

// bread.yaml's webhooks section reaches the engine: a background run
// started on `bread start` POSTs its record to the webhook, signed with the
// configured secret; without allowPrivateNetworks the same loopback
// receiver is refused before the run.
func TestBackgroundRunWebhookFromBreadYAML(t *testing.T) {
	got := make(chan []byte, 1)
	sig := make(chan string, 1)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		sig <- r.Header.Get(engine.SignatureHeader)
		got <- b
	}))
	defer recv.Close()
	// The secret written in bread.yaml, or named in the credentials
	// component (here the environment).
	t.Setenv("BREAD_TEST_HOOK_SECRET", "s3cret")
	for _, secret := range []string{"secret: s3cret", "secretCredential: BREAD_TEST_HOOK_SECRET"} {
		files := basic(nil)
		files["bread.yaml"] += "webhooks: {" + secret + ", allowPrivateNetworks: true}\n"
		s := serve(t, project(t, files))
		res, body := s.post(t, "/agents/echo/run", `{"input":"hi","background":true,"webhook":"`+recv.URL+`"}`, "")
		var run core.Detached
		if res.StatusCode != http.StatusAccepted || json.Unmarshal([]byte(body), &run) != nil {
			t.Fatalf("%s: POST = %d %s", secret, res.StatusCode, body)
		}
		select {
		case b := <-got:
			h := <-sig
			ts, _, _ := strings.Cut(strings.TrimPrefix(h, "t="), ",")
			var unix int64
			_ = json.Unmarshal([]byte(ts), &unix)
			if h != engine.SignWebhook("s3cret", time.Unix(unix, 0), b) {
				t.Fatalf("%s: signature %q does not verify", secret, h)
			}
			var rec core.RunRecord
			if err := json.Unmarshal(b, &rec); err != nil || rec.ID != run.RunID || rec.Status != core.RunCompleted {
				t.Fatalf("%s: delivery %s", secret, b)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no webhook delivery", secret)
		}
	}

	files := basic(nil)
	files["bread.yaml"] += "webhooks: {secret: s3cret}\n"
	s := serve(t, project(t, files))
	if res, body := s.post(t, "/agents/echo/run", `{"input":"hi","background":true,"webhook":"`+recv.URL+`"}`, ""); res.StatusCode != 400 || !strings.Contains(body, core.CodeValidationError) {
		t.Fatalf("a loopback webhook without allowPrivateNetworks: %d %s", res.StatusCode, body)
	}
}

// bread runs get reads a run's record from the project's store.
func TestRunsGet(t *testing.T) {
	dir := project(t, basic(nil))
	s := serve(t, dir)
	res, body := s.post(t, "/agents/echo/run", `{"input":"hi"}`, "application/x-ndjson")
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	var first struct {
		RunID string `json:"runId"`
	}
	if err := json.Unmarshal([]byte(body[:strings.IndexByte(body, '\n')]), &first); err != nil || first.RunID == "" {
		t.Fatalf("first line of %q: %v", body, err)
	}
	r := run(t, cli.Options{}, "runs", "get", first.RunID, "--json", "--cwd", dir)
	var rec core.RunRecord
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rec) != nil || rec.ID != first.RunID || rec.Status != core.RunCompleted || rec.AgentID != "echo" {
		t.Fatalf("runs get --json: %+v", r)
	}
	if r := run(t, cli.Options{}, "runs", "get", first.RunID, "--cwd", dir); r.code != 0 || !strings.Contains(r.stdout, "completed") {
		t.Fatalf("runs get: %+v", r)
	}
	if r := run(t, cli.Options{}, "runs", "get", "no-such-run", "--cwd", dir); r.code == 0 || !strings.Contains(r.stderr, core.CodeRunNotFound) {
		t.Fatalf("an unknown run: %+v", r)
	}
	if r := run(t, cli.Options{}, "runs", "--cwd", dir); r.code != cli.ExitUsage {
		t.Fatalf("runs without a verb: %+v", r)
	}
}

// bread runs list shows the newest records, filtered; bread runs cancel
// ends a run that waits for a human, which then lists as cancelled.
func TestRunsListAndCancel(t *testing.T) {
	dir := project(t, basic(map[string]string{
		"agents/ask/agent.yaml":         "model: {provider: replay, model: t/ask.jsonl}\n",
		"agents/ask/tools/confirm.yaml": "type: human\nprompt: Sure?\n",
		"t/ask.jsonl":                   transcript(`raw:{"call":N,"type":"tool-call","toolCallId":"c1","toolName":"human_confirm","input":{}}`),
	}))
	if r := run(t, cli.Options{}, "invoke", "echo", "hi", "--cwd", dir); r.code != 0 {
		t.Fatalf("invoke echo: %+v", r)
	}
	if r := run(t, cli.Options{}, "invoke", "ask", "go", "--cwd", dir); r.code != cli.ExitNeedsHITL {
		t.Fatalf("invoke ask: %+v", r)
	}
	list := func(args ...string) []core.RunRecord {
		t.Helper()
		r := run(t, cli.Options{}, append([]string{"runs", "list", "--json", "--cwd", dir}, args...)...)
		var recs []core.RunRecord
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &recs) != nil {
			t.Fatalf("runs list %v: %+v", args, r)
		}
		return recs
	}
	all := list()
	if len(all) != 2 || all[0].AgentID != "ask" || all[1].AgentID != "echo" {
		t.Fatalf("runs list, newest first: %+v", all)
	}
	waiting := list("--status", "suspended")
	if len(waiting) != 1 || waiting[0].AgentID != "ask" {
		t.Fatalf("runs list --status suspended: %+v", waiting)
	}
	if got := list("--agent", "echo", "--limit", "1"); len(got) != 1 || got[0].Status != core.RunCompleted {
		t.Fatalf("runs list --agent echo: %+v", got)
	}
	if r := run(t, cli.Options{}, "runs", "cancel", all[1].ID, "--cwd", dir); r.code == 0 || !strings.Contains(r.stderr, "neither queued nor waiting for a human") {
		t.Fatalf("cancelling a finished run: %+v", r)
	}
	if r := run(t, cli.Options{}, "runs", "cancel", waiting[0].ID, "--cwd", dir); r.code != 0 || !strings.Contains(r.stdout, "cancelled") {
		t.Fatalf("runs cancel: %+v", r)
	}
	if got := list("--status", "cancelled"); len(got) != 1 || got[0].ID != waiting[0].ID {
		t.Fatalf("the cancelled run: %+v", got)
	}
	if r := run(t, cli.Options{}, "runs", "list", "--status", "sleeping", "--cwd", dir); r.code != cli.ExitUsage {
		t.Fatalf("an unknown status: %+v", r)
	}
	// Text output: a header and one line per run.
	if r := run(t, cli.Options{}, "runs", "list", "--cwd", dir); r.code != 0 || strings.Count(r.stdout, "\n") != 3 || !strings.HasPrefix(r.stdout, "RUN") {
		t.Fatalf("runs list: %+v", r)
	}
}
