package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// terminal drives the bread binary through a pseudo-terminal.
type terminal struct {
	t   *testing.T
	f   *os.File
	cmd *exec.Cmd
	mu  sync.Mutex
	out bytes.Buffer
}

func startTerminal(t *testing.T, dir string, args ...string) *terminal {
	t.Helper()
	cmd := exec.Command(binary, append(args, "--cwd", dir)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	f, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, f: f, cmd: cmd}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		f.Close()
	})
	return term
}

// expect waits until the output holds s.
func (tm *terminal) expect(s string) {
	tm.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		tm.mu.Lock()
		ok := strings.Contains(tm.out.String(), s)
		tm.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	tm.t.Fatalf("terminal never showed %q; it shows:\n%s", s, tm.out.String())
}

// exit leaves the chat with /exit and waits for a clean exit.
func (tm *terminal) exit() {
	tm.t.Helper()
	tm.send("/exit")
	done := make(chan error, 1)
	go func() { done <- tm.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			tm.t.Fatalf("chat exited with %v", err)
		}
	case <-time.After(10 * time.Second):
		tm.t.Fatal("chat did not exit on /exit")
	}
}

func (tm *terminal) send(line string) {
	tm.t.Helper()
	if _, err := io.WriteString(tm.f, line+"\n"); err != nil {
		tm.t.Fatal(err)
	}
}

func TestChatThroughATerminalWithAHumanAnswer(t *testing.T) {
	dir := project(t, map[string]string{
		"bread.yaml":                      "store: {type: sqlite, path: ./bread.db}\n",
		"agents/publisher/agent.yaml":     "model: {provider: replay, model: t/pub.jsonl}\n",
		"agents/publisher/tools/ask.yaml": "type: human\nprompt: Which channel?\nschema: {type: object, properties: {question: {type: string}}}\n",
		"t/pub.jsonl": transcript(
			`raw:{"call":N,"type":"tool-call","toolCallId":"h1","toolName":"human_ask","input":{"question":"channel?"}}`,
			"Published to the blog.",
			"Anything else is fine too.",
		),
	})
	term := startTerminal(t, dir, "chat")
	term.expect("chatting with publisher (session ")
	term.send("publish my post")
	term.expect("Which channel?")
	term.send(`{"channel":"blog"}`)
	term.expect("Published to the blog.")
	term.send("thanks")
	term.expect("Anything else is fine too.")
	term.exit()
}

// A turn that calls two human tools at once: the chat asks both, one after
// the other, and the run goes on after the second answer.
func TestChatAsksEveryHumanOfATurn(t *testing.T) {
	dir := project(t, map[string]string{
		"bread.yaml":                          "store: {type: sqlite, path: ./bread.db}\n",
		"agents/planner/agent.yaml":           "model: {provider: replay, model: t/plan.jsonl}\n",
		"agents/planner/tools/pick_day.yaml":  "type: human\nprompt: Which day?\nschema: {type: object}\n",
		"agents/planner/tools/pick_city.yaml": "type: human\nprompt: Which city?\nschema: {type: object}\n",
		"t/plan.jsonl": transcript(
			`raw:{"call":N,"type":"tool-call","toolCallId":"d","toolName":"human_pick_day","input":{}}`+"\n"+
				`{"call":N,"type":"tool-call","toolCallId":"c","toolName":"human_pick_city","input":{}}`,
			"Rome on Friday it is.",
		),
	})
	term := startTerminal(t, dir, "chat")
	term.expect("chatting with planner (session ")
	term.send("plan a trip")
	term.expect("Which day?")
	term.send(`{"day":"Friday"}`)
	term.expect("Which city?")
	term.send(`{"city":"Rome"}`)
	term.expect("Rome on Friday it is.")
	term.exit()
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func waitHTTP(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never answered", url)
}

func TestDevReloadKeepsAnOpenStream(t *testing.T) {
	slow := `{"call":0,"type":"text-delta","delta":"one ","delayMs":10}
{"call":0,"type":"text-delta","delta":"two ","delayMs":800}
{"call":0,"type":"text-delta","delta":"three","delayMs":10}
{"call":0,"type":"finish","finishReason":"stop"}
`
	dir := project(t, map[string]string{
		"bread.yaml":             "store: {type: sqlite, path: ./bread.db}\n",
		"agents/slow/agent.yaml": "model: {provider: replay, model: t/slow.jsonl}\n",
		"t/slow.jsonl":           slow,
	})
	port := freePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	logs := &syncWriter{w: &bytes.Buffer{}}
	cmd := exec.Command(binary, "dev", "-p", strconv.Itoa(port), "-H", "127.0.0.1", "--cwd", dir)
	cmd.Stderr, cmd.Stdout = logs, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitHTTP(t, base+"/agents")

	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, base+"/agents/slow/run", strings.NewReader(`{"input":"go"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	var got []string
	for lines.Scan() && len(got) < 2 {
		if l := lines.Text(); l != "" {
			got = append(got, l)
		}
	}
	// The stream is open (start and the first delta arrived); change the
	// project: a new agent appears.
	if err := os.MkdirAll(filepath.Join(dir, "agents", "fresh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agents", "fresh", "agent.yaml"), []byte("model: {provider: replay, model: t/slow.jsonl}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(agents(t, base), `"fresh"`) {
		if time.Now().After(deadline) {
			t.Fatalf("dev never reloaded; logs:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for lines.Scan() {
		got = append(got, lines.Text())
	}
	last := got[len(got)-1]
	if !strings.Contains(last, `"type":"agent:run:end"`) || !strings.Contains(last, "one two three") {
		t.Fatalf("the stream opened before the reload must finish; it ended with %s", last)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("dev did not stop cleanly: %v\n%s", err, logs.String())
	}
}

func agents(t *testing.T, base string) string {
	resp, err := http.Get(base + "/agents")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// syncWriter lets a test read logs a process writes concurrently.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.(*bytes.Buffer).String()
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
