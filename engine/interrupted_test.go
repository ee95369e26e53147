package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
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
