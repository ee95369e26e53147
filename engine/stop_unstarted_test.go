package engine_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// TestAJobItsStoppingInstanceDidNotStartGoesBackToTheQueue is a violation
// the chaos harness found (issue 31): a schedule tick's run stayed queued
// for good although its job had been enqueued, with no error logged. The
// queue handed the run's job to a replica whose SIGTERM drain had begun:
// the instance refused the run (INSTANCE_STOPPING) before writing
// anything of it, and the job returned no error, so the queue was done
// with it while the record still said queued. A job whose run the
// instance refuses to start because it is stopping (or at its run cap)
// is now snoozed, its record left queued and nothing logged, for a
// worker of another replica to start it.
func TestAJobItsStoppingInstanceDidNotStartGoesBackToTheQueue(t *testing.T) {
	for _, tc := range []struct {
		name string
		// late hands the job out inside the queue's Stop, as River works
		// the jobs it fetched before it was stopped; otherwise the stop
		// comes while the job's run waits for its session, which another
		// run holds.
		late bool
	}{
		{name: "handed out while the queue stops", late: true},
		{name: "waiting for its session when the stop comes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reached := make(chan struct{})
				store := memory.New()
				agent := textAgent("writer")
				agent.Concurrency = core.ConcurrencyEnqueue
				job := engine.RunJobForTest("run-1", "writer", "the job", "s", "")
				late := &lateQueue{JobQueue: memory.NewQueue(memory.QueueOptions{Concurrency: 1}), job: job}
				tb := newTestbed(t, modeltest.New(modeltest.Block(reached, "holding")), []*core.Agent{agent},
					func(c *engine.Config) { c.Store, c.Jobs = keptOpen{store}, late })
				ctx := context.Background()
				if _, err := store.CreateSession(ctx, core.NewSession{ID: "s", AgentID: "writer"}); err != nil {
					t.Fatal(err)
				}
				queued := core.RunRecord{ID: "run-1", AgentID: "writer", SessionID: "s", Status: core.RunQueued, CreatedAt: 1, UpdatedAt: 1}
				if err := store.PutRun(ctx, queued); err != nil {
					t.Fatal(err)
				}
				var worked error
				if tc.late {
					if err := tb.in.Stop(ctx); err != nil {
						t.Fatal(err)
					}
					worked = late.result
				} else {
					held := make(chan error, 1)
					go func() {
						_, err := tb.run(t, "writer", "hold the session", core.RunOptions{Session: core.SessionOptions{ID: "s"}})
						held <- err
					}()
					<-reached
					done := make(chan error, 1)
					go func() { done <- tb.in.WorkJobForTest(context.Background(), job) }()
					synctest.Wait() // the job's run waits for the session
					if err := tb.in.Stop(ctx); err != nil {
						t.Fatal(err)
					}
					worked = <-done
					<-held
				}
				var snooze *core.JobSnooze
				if !errors.As(worked, &snooze) {
					t.Fatalf("the job returned %v; want it snoozed (back to the queue)", worked)
				}
				if rec := getRun(t, store, "run-1"); rec.Status != core.RunQueued || rec.Attempt != 0 || rec.Owner != "" || rec.ErrorCode != "" {
					t.Fatalf("the record after the refusal: %+v, want it queued as it was", rec)
				}
				if types := loggedTypes(t, store, "run-1"); len(types) != 0 {
					t.Fatalf("the run's crumb log = %v, want nothing: it never started", types)
				}
			})
		})
	}
}

// lateQueue is a job queue that hands out one more job while it stops, as
// River does with the jobs it fetched before Stop: by then the instance
// refuses new runs, and its store is still open.
type lateQueue struct {
	core.JobQueue
	job    core.Job
	worker core.JobWorker
	result error
}

func (q *lateQueue) Start(ctx context.Context, w core.JobWorker, schedules []core.JobSchedule) error {
	q.worker = w
	return q.JobQueue.Start(ctx, w, schedules)
}

func (q *lateQueue) Stop(ctx context.Context) error {
	q.result = q.worker.WorkJob(ctx, q.job)
	return q.JobQueue.Stop(ctx)
}
