package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// TestAResumedCheckpointIsRemovedThroughAFailedWrite is a violation the
// chaos harness found (issue 31, "answered approvals applied exactly
// once"): a resume completed its run, but the removal of the checkpoint it
// resumed met a terminated PostgreSQL connection; the checkpoint stayed
// behind, claimed, its claim renewed by the resuming replica for as long
// as it lived. The removal is now retried (about three seconds) like a
// run's end write; a removal that finds the checkpoint gone (a try that
// landed though its answer was lost) is done.
func TestAResumedCheckpointIsRemovedThroughAFailedWrite(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fails int32 // removals that fail before one goes through
		gone  bool  // the failing tries removed it though they failed
	}{
		{name: "one removal cut off", fails: 1},
		{name: "three removals cut off", fails: 3},
		{name: "a removal that landed but answered an error", fails: 1, gone: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := &flakyRemovals{Store: memory.New(), gone: tc.gone}
				tb := newTestbed(t, modeltest.New(modeltest.ToolCall("human_approve_publish", map[string]string{}), modeltest.Text("published")),
					[]*core.Agent{askAgent()}, func(c *engine.Config) { c.Store = store })
				cs, _ := tb.run(t, "publisher", "x", core.RunOptions{})
				hr := suspendOn(t, cs)
				store.fails.Store(tc.fails)
				if _, err := collect(tb.in.Resume(context.Background(), hr.CheckpointID, okAnswer)); err != nil {
					t.Fatal(err)
				}
				if n := store.fails.Load(); n > 0 {
					t.Fatalf("%d of the removal's failures were not reached", n)
				}
				if _, err := store.Store.GetCheckpoint(context.Background(), hr.CheckpointID); !errors.Is(err, core.ErrCheckpointNotFound) {
					t.Fatalf("the resumed checkpoint is still there (%v) after its run completed", err)
				}
				if rec := getRun(t, store, hr.RunID); rec.Status != core.RunCompleted {
					t.Fatalf("the run's record: %+v", rec)
				}
			})
		})
	}
}

// flakyRemovals fails DeleteCheckpoint with STORE_UNAVAILABLE while fails
// is positive (after removing the checkpoint when gone is set: the
// connection died with the answer in flight).
type flakyRemovals struct {
	*memory.Store
	fails atomic.Int32
	gone  bool
}

func (s *flakyRemovals) DeleteCheckpoint(ctx context.Context, id string) (core.CheckpointRecord, error) {
	if s.fails.Add(-1) >= 0 {
		if s.gone {
			_, _ = s.Store.DeleteCheckpoint(ctx, id)
		}
		return core.CheckpointRecord{}, &core.BreadError{Code: core.CodeStoreUnavailable, Message: "delete checkpoint: cannot reach the database"}
	}
	return s.Store.DeleteCheckpoint(ctx, id)
}
