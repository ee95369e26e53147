package cli_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/breadai/bread/cli"
)

// TestAGUIFromBreadYAML: `plugins: [{type: agui, ...}]` mounts the AG-UI
// run route on `bread start`, at the configured path, streaming the run's
// events as SSE over a real socket.
func TestAGUIFromBreadYAML(t *testing.T) {
	dir := project(t, basic(map[string]string{
		"bread.yaml": "entrypoints: [echo]\nstore: {type: sqlite, path: ./bread.db}\nplugins:\n  - {type: agui, agent: echo, path: /ui/run, heartbeat: 5s}\n",
	}))
	base := serve(t, dir).base
	res, err := http.Post(base+"/ui/run", "application/json", strings.NewReader(`{"threadId":"th-1","runId":"r","messages":[{"id":"m","role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s: %s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	for _, want := range []string{`data: {"type":"RUN_STARTED"`, `"threadId":"th-1"`, `"delta":"Hello there."`, `"type":"RUN_FINISHED"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("missing %s in\n%s", want, body)
		}
	}
	res, err = http.Post(base+"/ui/run", "application/json", strings.NewReader(`{"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"VALIDATION_ERROR"`) {
		t.Errorf("malformed input: %d %s", res.StatusCode, body)
	}
}

// TestAGUIConfigErrors: an agent that does not exist fails the boot.
func TestAGUIConfigErrors(t *testing.T) {
	dir := project(t, basic(map[string]string{
		"bread.yaml": "entrypoints: [echo]\nstore: {type: sqlite, path: ./bread.db}\nplugins:\n  - {type: agui, agent: ghost}\n",
	}))
	r := run(t, cli.Options{}, "invoke", "--cwd", dir, "echo", "hi")
	if r.code == cli.ExitOK || !strings.Contains(r.stderr, "AGENT_NOT_FOUND") {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
	dir = project(t, basic(map[string]string{
		"bread.yaml": "entrypoints: [echo]\nstore: {type: sqlite, path: ./bread.db}\nplugins:\n  - {type: agui, agnet: echo}\n",
	}))
	r = run(t, cli.Options{}, "invoke", "--cwd", dir, "echo", "hi")
	if r.code == cli.ExitOK || !strings.Contains(r.stderr, "INVALID_CONFIG") {
		t.Errorf("typo: exit %d: %s", r.code, r.stderr)
	}
	dir = project(t, basic(map[string]string{
		"bread.yaml": "entrypoints: [echo]\nstore: {type: sqlite, path: ./bread.db}\nplugins:\n  - {type: agui, agent: echo, heartbeat: fast}\n",
	}))
	r = run(t, cli.Options{}, "invoke", "--cwd", dir, "echo", "hi")
	if r.code == cli.ExitOK || !strings.Contains(r.stderr, "bread.yaml:") || !strings.Contains(r.stderr, "fast") {
		t.Errorf("a heartbeat that is not a duration: exit %d: %s", r.code, r.stderr)
	}
}
