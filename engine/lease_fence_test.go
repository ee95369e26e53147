package engine_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// pausedAfterClaim is the store as a replica sees it that is paused
// (SIGSTOP) right after it claims a checkpoint: the claim returns only once
// the test resumes it, and while paused its keeper renews nothing.
type pausedAfterClaim struct {
	*memory.Store
	mu      sync.Mutex
	armed   bool
	paused  bool
	claimed chan struct{}
	resume  chan struct{}
}

func (s *pausedAfterClaim) ClaimCheckpoint(ctx context.Context, id, claimant string, now, until int64) (core.CheckpointRecord, error) {
	cp, err := s.Store.ClaimCheckpoint(ctx, id, claimant, now, until)
	s.mu.Lock()
	pause := s.armed && err == nil
	s.armed, s.paused = false, pause
	s.mu.Unlock()
	if pause {
		close(s.claimed)
		<-s.resume
	}
	return cp, err
}

func (s *pausedAfterClaim) RenewCheckpointClaims(ctx context.Context, claimant string, until int64) (int, error) {
	s.mu.Lock()
	paused := s.paused
	s.mu.Unlock()
	if paused {
		return 0, &core.BreadError{Code: core.CodeStoreUnavailable, Message: "paused"}
	}
	return s.Store.RenewCheckpointClaims(ctx, claimant, until)
}

func (s *pausedAfterClaim) unpause() {
	s.mu.Lock()
	s.paused = false
	s.mu.Unlock()
	close(s.resume)
}

// TestAResumerPausedPastItsClaimWritesNothing is a violation the chaos
// harness found (issue 31): a replica paused (SIGSTOP) right after it
// claimed a checkpoint, beyond its claim and lease; another replica
// resumed the checkpoint again; on SIGCONT the first went on too, and both
// appended the approved tool's result (a tool,tool pair in the session,
// an approval applied twice). A run whose instance's renewals are older
// than half a lease now checks, before each durable write, that it still
// holds its claim (its record, for a run not resumed), and writes nothing
// once it does not.
func TestAResumerPausedPastItsClaimWritesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &pausedAfterClaim{Store: memory.New(), claimed: make(chan struct{}), resume: make(chan struct{})}
		const lease = 300 * time.Millisecond
		tb := newTestbed(t, modeltest.New(
			modeltest.ToolCall("human_approve_publish", map[string]string{"url": "https://bread.dev"}),
			modeltest.Text("Published."),
		), []*core.Agent{askAgent()}, func(c *engine.Config) { c.Store = store; c.RunLease = lease })
		cs, err := collect(tb.in.Run(context.Background(), "publisher", "publish", core.RunOptions{}))
		if err != nil {
			t.Fatal(err)
		}
		hr := suspendOn(t, cs)

		store.mu.Lock()
		store.armed = true
		store.mu.Unlock()
		done := make(chan error, 1)
		go func() {
			_, err := collect(tb.in.Resume(context.Background(), hr.CheckpointID, map[string]any{"ok": true}))
			done <- err
		}()
		<-store.claimed
		time.Sleep(3 * lease) // paused past its claim and its lease
		// Another replica resumes the checkpoint again: the claim lapsed.
		now := time.Now()
		if _, err := store.Store.ClaimCheckpoint(context.Background(), hr.CheckpointID, "replica-b", now.UnixMilli(), now.Add(time.Hour).UnixMilli()); err != nil {
			t.Fatalf("the other replica's claim: %v", err)
		}
		store.unpause()
		wantCode(t, <-done, core.CodeRunLost)

		msgs, err := store.GetMessages(context.Background(), hr.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			var msg core.Message
			if json.Unmarshal(m.Content, &msg) == nil && msg.Role == core.RoleTool {
				t.Fatalf("the paused resumer wrote the tool's result into the session, next to the other replica's: %s", m.Content)
			}
		}
		cp, err := store.GetCheckpoint(context.Background(), hr.CheckpointID)
		if err != nil || cp.ClaimedBy != "replica-b" {
			t.Fatalf("the checkpoint after the paused resumer gave up: %+v, %v; want it the other replica's", cp, err)
		}
	})
}
