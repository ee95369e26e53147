package cli_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// slowChatProject is a one-agent project whose first run streams a word
// and then waits ten minutes before the rest; its second run answers at once.
func slowChatProject(t *testing.T) string {
	return project(t, map[string]string{
		"bread.yaml":             "store: {type: sqlite, path: ./bread.db}\n",
		"agents/slow/agent.yaml": "model: {provider: replay, model: t/slow.jsonl}\n",
		"t/slow.jsonl": `{"call":0,"type":"text-delta","delta":"working","delayMs":10}
{"call":0,"type":"text-delta","delta":" forever","delayMs":600000}
{"call":0,"type":"finish","finishReason":"stop"}
{"call":1,"type":"text-delta","delta":"second answer"}
{"call":1,"type":"finish","finishReason":"stop"}
`,
	})
}

// chatExitStatus waits for the chat process and returns its exit status.
func chatExitStatus(t *testing.T, term *terminal) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- term.cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		if err != nil {
			t.Fatalf("chat: %v", err)
		}
		return 0
	case <-time.After(15 * time.Second):
		t.Fatal("chat did not exit")
		return -1
	}
}

// TestChatCtrlCCancelsTheRunOnly: SIGINT while a run streams cancels that
// run and the chat goes on reading input (a second message is answered);
// /exit then leaves with status 0.
func TestChatCtrlCCancelsTheRunOnly(t *testing.T) {
	term := startTerminal(t, slowChatProject(t), "chat")
	term.expect("chatting with slow (session ")
	term.send("start")
	term.expect("working")
	if err := term.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	term.expect("cancelling the run")
	term.expect("RUN_CANCELLED")
	term.expect("run cancelled")
	term.send("again")
	term.expect("second answer")
	term.send("/exit")
	if code := chatExitStatus(t, term); code != 0 {
		t.Fatalf("/exit after a cancelled run: status %d\n%s", code, term.output())
	}
	if out := term.output(); strings.Contains(out, " forever") {
		t.Errorf("the cancelled run went on streaming:\n%s", out)
	}
}

// TestChatCtrlCAtThePromptLeaves: SIGINT with no run in flight ends the
// chat with status 130.
func TestChatCtrlCAtThePromptLeaves(t *testing.T) {
	term := startTerminal(t, slowChatProject(t), "chat")
	term.expect("chatting with slow (session ")
	term.expect("> ")
	if err := term.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := chatExitStatus(t, term); code != 130 {
		t.Fatalf("Ctrl-C at the prompt: status %d, want 130\n%s", code, term.output())
	}
}

// TestChatSecondCtrlCLeaves: a second SIGINT right after the first leaves
// the chat with status 130 (whether it lands while the run is still being
// cancelled or back at the prompt).
func TestChatSecondCtrlCLeaves(t *testing.T) {
	term := startTerminal(t, slowChatProject(t), "chat")
	term.expect("chatting with slow (session ")
	term.send("start")
	term.expect("working")
	_ = term.cmd.Process.Signal(os.Interrupt)
	term.expect("cancelling the run")
	_ = term.cmd.Process.Signal(os.Interrupt)
	if code := chatExitStatus(t, term); code != 130 {
		t.Fatalf("a second Ctrl-C: status %d, want 130\n%s", code, term.output())
	}
}

func (tm *terminal) output() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()
}
