package engine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// TestATickWhoseRunWasRecordedButNeverQueuedRunsOnItsRetry is a violation
// the chaos harness found (issue 31): a schedule tick's run was recorded
// queued, then its job was never enqueued (the process died, or the queue
// failed, between the two writes); the tick, handed out again, found the
// record and took the run as enqueued, so it stayed queued for good. The
// retried tick enqueues its job again (a queue adds none twice under one
// key), and the run runs.
func TestATickWhoseRunWasRecordedButNeverQueuedRunsOnItsRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbed(t, modeltest.New(modeltest.Text("report")), []*core.Agent{textAgent("writer")}, withQueue(1), func(c *engine.Config) {
			c.Schedules = []engine.Schedule{{Name: "nightly", Spec: "0 3 * * *", AgentID: "writer", Input: "write the report"}}
		})
		at := time.Unix(1_800_000_000, 0)
		runID := engine.ScheduleRunID("nightly", at)
		ctx := context.Background()
		sess, err := tb.store.CreateSession(ctx, core.NewSession{AgentID: "writer"})
		if err != nil {
			t.Fatal(err)
		}
		// What the first attempt at the tick left: the record, no job.
		if err := tb.store.PutRun(ctx, core.RunRecord{ID: runID, AgentID: "writer", SessionID: sess.ID, Status: core.RunQueued, CreatedAt: 1, UpdatedAt: 1}); err != nil {
			t.Fatal(err)
		}
		if err := tb.in.WorkJobForTest(t.Context(), core.Job{Kind: core.JobKindTick, Key: core.ScheduleTickKey("nightly", at)}); err != nil {
			t.Fatal(err)
		}
		if rec := waitRecord(t, tb.store, runID, status(core.RunCompleted)); rec.SessionID != sess.ID {
			t.Fatalf("the tick's run: %+v, want it completed in its recorded session", rec)
		}
	})
}

// refusingQueue fails every Enqueue, as a queue on a database whose
// connections were terminated does.
type refusingQueue struct{ *memory.Queue }

func (refusingQueue) Enqueue(context.Context, core.Job) error {
	return &core.BreadError{Code: core.CodeStoreUnavailable, Message: "FATAL: terminating connection due to administrator command"}
}

// failedWriteOnce fails the first write of a failed run record.
type failedWriteOnce struct {
	*memory.Store
	done atomic.Bool
}

func (s *failedWriteOnce) fail(r core.RunRecord) error {
	if r.Status == core.RunFailed && s.done.CompareAndSwap(false, true) {
		return &core.BreadError{Code: core.CodeStoreUnavailable, Message: "the connection was terminated"}
	}
	return nil
}

func (s *failedWriteOnce) PutRun(ctx context.Context, r core.RunRecord) error {
	if err := s.fail(r); err != nil {
		return err
	}
	return s.Store.PutRun(ctx, r)
}

func (s *failedWriteOnce) EndRun(ctx context.Context, r core.RunRecord, owner string) (bool, error) {
	if err := s.fail(r); err != nil {
		return false, err
	}
	return s.Store.EndRun(ctx, r, owner)
}

// TestABackgroundRunTheQueueRefusedIsNotLeftQueued is a violation the
// chaos harness found (issue 31): a background run whose job the queue
// refused (its database cut off) is refused to its caller and recorded
// failed; when that write met the same fault the record stayed queued,
// with no job, for good. The write is retried like a run's end.
func TestABackgroundRunTheQueueRefusedIsNotLeftQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &failedWriteOnce{Store: memory.New()}
		tb := newTestbed(t, modeltest.New(), []*core.Agent{textAgent("writer")}, func(c *engine.Config) {
			c.Store = store
			c.Jobs = refusingQueue{memory.NewQueue(memory.QueueOptions{Concurrency: 1})}
		})
		_, err := tb.in.RunBackground(t.Context(), "writer", "hi", core.RunOptions{}, core.BackgroundOptions{})
		wantCode(t, err, core.CodeInternalError)
		runs, lerr := store.ListRuns(t.Context(), core.RunFilter{})
		if lerr != nil || len(runs) != 1 {
			t.Fatalf("runs %+v, %v; want the refused run's record", runs, lerr)
		}
		if r := runs[0]; r.Status != core.RunFailed || r.ErrorCode != core.CodeInternalError {
			t.Fatalf("the refused run's record: %+v, want failed INTERNAL_ERROR", r)
		}
	})
}
