package engine_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

func roles(msgs []core.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Role)
	}
	return out
}

// TestAnInterruptedRunLeavesTheSessionWellFormed: a cancelled run and a
// run that failed after a tool call each leave a reply in the session, so
// the next run's history alternates as providers require.
func TestAnInterruptedRunLeavesTheSessionWellFormed(t *testing.T) {
	reached := make(chan struct{})
	a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{weatherTool()}}
	tb := newTestbed(t, modeltest.New(
		modeltest.Block(reached, "thinking"),
		modeltest.ToolCall("tool_weather", cityArgs{City: "Rome"}),
		modeltest.Fail(&core.BreadError{Code: core.CodeProviderError, Message: "upstream down"}),
		modeltest.Text("hello again"),
	), []*core.Agent{a})

	// 1. Cancelled mid-call.
	ctx, cancel := context.WithCancel(context.Background())
	var sessionID string
	done := make(chan error, 1)
	go func() {
		var last error
		for c, err := range tb.in.Run(ctx, "a", "first", core.RunOptions{}) {
			if sessionID == "" {
				sessionID = c.Base().SessionID
			}
			if err != nil {
				last = err
			}
		}
		done <- last
	}()
	<-reached
	cancel()
	if err := <-done; !errors.Is(err, core.ErrRunCancelled) {
		t.Fatalf("the first run: %v", err)
	}
	// 2. A tool call, then the model fails.
	if _, err := tb.run(t, "a", "second", core.RunOptions{Session: core.SessionOptions{ID: sessionID}}); err == nil {
		t.Fatal("the second run should fail")
	}
	// 3. The next run sees a well-formed history.
	if _, err := tb.run(t, "a", "third", core.RunOptions{Session: core.SessionOptions{ID: sessionID}}); err != nil {
		t.Fatal(err)
	}
	msgs := tb.model.Requests()[3].Messages
	want := []string{"user", "assistant", "user", "assistant", "user"}
	if got := roles(msgs); !equalStrings(got, want) {
		t.Fatalf("history roles %v\nwant          %v", got, want)
	}
	if msgs[1].Parts[0].Text != "[interrupted: RUN_CANCELLED]" || msgs[3].Parts[0].Text != "[interrupted: PROVIDER_ERROR]" {
		t.Errorf("interruptions: %q, %q", msgs[1].Parts[0].Text, msgs[3].Parts[0].Text)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestAPlainErrorStaysInTheLog: a plain Go error can carry anything (here
// a DSN with a password); the client sees INTERNAL_ERROR, the server's log
// has the text with the run it belongs to.
func TestAPlainErrorStaysInTheLog(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	tb := newTestbed(t, modeltest.New(modeltest.Fail(errors.New("dial postgres://app:hunter2@db:5432 refused"))), []*core.Agent{textAgent("a")},
		func(c *engine.Config) { c.Logger = logger })
	cs, err := tb.run(t, "a", "x", core.RunOptions{})
	wantCode(t, err, core.CodeInternalError)
	ae := last[*core.AgentError](t, cs)
	if strings.Contains(ae.Error.Message, "hunter2") || ae.Error.Code != core.CodeInternalError {
		t.Fatalf("the client sees %+v", ae.Error)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "hunter2") || !strings.Contains(logs.String(), "run_id="+ae.RunID) {
		t.Fatalf("the server log lacks the error or its run: %s", logs.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
