package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// readCounter is the memory store counting the sessions' history reads.
type readCounter struct {
	*memory.Store
	reads atomic.Int32
}

func (s *readCounter) GetMessages(ctx context.Context, sessionID string) ([]core.SessionMessage, error) {
	s.reads.Add(1)
	return s.Store.GetMessages(ctx, sessionID)
}

// A run on a session it creates knows the session's history (its own user
// message) and does not read it back; a run that continues a session, or
// a retried attempt, reads it from the store. The model sees the same
// messages either way.
func TestHistoryIsReadOnlyWhenOthersMayHaveWritten(t *testing.T) {
	store := &readCounter{Store: memory.New()}
	model := modeltest.New(modeltest.Text("first answer"), modeltest.Text("second answer"))
	in, err := engine.New(engine.Config{Store: store, Agents: []*core.Agent{textAgent("a")}, Providers: model.Registry("mock")})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })

	first, err := in.RunSync(t.Context(), "a", "hello", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := store.reads.Load(); n != 0 {
		t.Errorf("a run on a new session read its history %d times, want 0", n)
	}
	if _, err := in.RunSync(t.Context(), "a", "again", core.RunOptions{Session: core.SessionOptions{ID: first.SessionID}}); err != nil {
		t.Fatal(err)
	}
	if n := store.reads.Load(); n != 1 {
		t.Errorf("a run continuing a session read its history %d times, want 1", n)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	if got := texts(reqs[0].Messages); asJSON(t, got) != asJSON(t, []string{"user: hello"}) {
		t.Errorf("first call saw %q", got)
	}
	if got := texts(reqs[1].Messages); asJSON(t, got) != asJSON(t, []string{"user: hello", "assistant: first answer", "user: again"}) {
		t.Errorf("second call saw %q", got)
	}
}

// A retried attempt reads the history back: the failed attempt may have
// left the session otherwise than it found it.
func TestARetriedAttemptReadsTheHistory(t *testing.T) {
	store := &readCounter{Store: memory.New()}
	model := modeltest.New(modeltest.Fail(errors.New("transient")), modeltest.Text("second time"))
	a := textAgent("a")
	a.ErrorHandling.Retry = &core.RetryPolicy{Attempts: 2, BackoffMs: 1}
	in, err := engine.New(engine.Config{Store: store, Agents: []*core.Agent{a}, Providers: model.Registry("mock")})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	if _, err := in.RunSync(t.Context(), "a", "hello", core.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := store.reads.Load(); n != 1 {
		t.Errorf("two attempts on a new session read its history %d times, want 1 (the retry)", n)
	}
	if got := texts(model.Requests()[1].Messages); asJSON(t, got) != asJSON(t, []string{"user: hello"}) {
		t.Errorf("the retry saw %q", got)
	}
}

func texts(ms []core.Message) []string {
	var out []string
	for _, m := range ms {
		for _, p := range m.Parts {
			out = append(out, string(m.Role)+": "+p.Text)
		}
	}
	return out
}
