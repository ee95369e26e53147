package engine_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// writeAfterRead is a memory store that, once armed with n, writes a
// message to the session right after the nth read of it that ends with
// the cancelled waiting run's answer and the assistant message closing its
// turn: a write landing between a rollback's read of the session and its
// removal.
type writeAfterRead struct {
	*memory.Store
	armed atomic.Int32
}

func (s *writeAfterRead) GetMessages(ctx context.Context, sessionID string) ([]core.SessionMessage, error) {
	msgs, err := s.Store.GetMessages(ctx, sessionID)
	if err == nil && len(msgs) > 1 && msgs[len(msgs)-2].Role == core.RoleTool && s.armed.Load() > 0 && s.armed.Add(-1) == 0 {
		note := core.SessionMessage{Role: core.RoleUser, Content: []byte(`{"role":"user","parts":[{"type":"text","text":"a note written meanwhile"}]}`), Timestamp: msgs[len(msgs)-1].Timestamp + 1}
		if err := s.Store.AddMessage(ctx, sessionID, note); err != nil {
			return nil, err
		}
	}
	return msgs, err
}

// TestARollbackRemovesOnlyTheMessagesItRead is the chaos harness's
// rollback session (seed 3): a rollback of a cancelled waiting run counted
// the run's messages at one read and removed the session's last n at a
// second, so a message written between the two was removed in place of
// one of the run's, and the run's call was left without its result.
func TestARollbackRemovesOnlyTheMessagesItRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := askAgent()
		agent.Concurrency = core.ConcurrencyRollback
		model := modeltest.New(modeltest.ToolCall("human_approve_publish", map[string]string{"url": "https://bread.dev"}), modeltest.Text("second"))
		store := &writeAfterRead{Store: memory.New()}
		tb := newTestbed(t, model, []*core.Agent{agent}, func(c *engine.Config) { c.Store = store })
		opts := core.RunOptions{Session: core.SessionOptions{ID: "s-rollback-reads"}}
		cs, err := tb.run(t, "publisher", "publish", opts)
		if err != nil {
			t.Fatal(err)
		}
		suspendOn(t, cs)
		// The first such read is the rollback's (the cancellation's own
		// reads end before the turn is closed).
		store.armed.Store(1)
		if _, err := collect(tb.in.Run(context.Background(), "publisher", "again", opts)); err != nil {
			t.Fatalf("the rolling-back run: %v", err)
		}
		if store.armed.Load() != 0 {
			t.Fatal("no read of the session ended with the cancelled run's answer: the test proves nothing")
		}
		roles, problem := wellFormed(t, store, "s-rollback-reads")
		if problem != "" {
			t.Fatalf("history %v: %s", roles, problem)
		}
		msgs, err := store.GetMessages(context.Background(), "s-rollback-reads")
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 || !strings.Contains(string(msgs[0].Content), "a note written meanwhile") {
			t.Fatalf("history %v: the note written during the rollback was removed, or the waiting run's first message kept", roles)
		}
	})
}
