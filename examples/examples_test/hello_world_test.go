package examplestest

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestHelloWorld(t *testing.T) {
	t.Parallel()
	dir := copyExample(t, "hello-world")
	answer := transcriptText(t, filepath.Join(dir, "transcripts/echo.jsonl"), 0)

	t.Run("invoke streams the answer", func(t *testing.T) {
		r := mustBread(t, invocation{dir: dir, args: []string{"invoke", "echo", "hi"}})
		if r.stdout != answer+"\n" {
			t.Errorf("stdout %q, want %q", r.stdout, answer+"\n")
		}
	})
	t.Run("invoke --json prints the output", func(t *testing.T) {
		r := mustBread(t, invocation{dir: dir, args: []string{"invoke", "echo", "--json", "hi"}})
		var out string
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out != answer {
			t.Errorf("stdout %q (%v), want the JSON string %q", r.stdout, err, answer)
		}
	})
	t.Run("invoke reads stdin", func(t *testing.T) {
		r := mustBread(t, invocation{dir: dir, args: []string{"invoke", "echo"}, stdin: "hi\n"})
		if strings.TrimSpace(r.stdout) != answer {
			t.Errorf("stdout %q", r.stdout)
		}
	})
	t.Run("chat", func(t *testing.T) {
		r := mustBread(t, invocation{dir: dir, args: []string{"chat"}, stdin: "hi\n/exit\n"})
		if !strings.Contains(r.stdout, "chatting with echo") || !strings.Contains(r.stdout, answer) {
			t.Errorf("chat: %s", r)
		}
	})
	t.Run("the curl of the README", func(t *testing.T) {
		srv := startServer(t, copyExample(t, "hello-world"), nil)
		crumbs := stream(t, srv.URL+"/agents/echo/run", `{"input":"hi"}`, nil)
		if out := text(runEnd(t, crumbs, "echo").Output); out != answer {
			t.Errorf("output %v, want %q", out, answer)
		}
	})
}
