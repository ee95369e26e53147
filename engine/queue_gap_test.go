package engine_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// stopsAtQueued is a store whose process stops at the write of a
// background run's queued record (attempt 0): the write waits until
// released, then is made (a paused enqueuer that wakes) or fails (a killed
// one: nothing of it reaches the store).
type stopsAtQueued struct {
	*memory.Store
	mu      sync.Mutex
	runID   string
	release chan struct{}
	wakes   bool
}

func (s *stopsAtQueued) PutRun(ctx context.Context, r core.RunRecord) error {
	if r.Status == core.RunQueued && r.Attempt == 0 {
		s.mu.Lock()
		s.runID = r.ID
		s.mu.Unlock()
		<-s.release
		if !s.wakes {
			return &core.BreadError{Code: core.CodeStoreUnavailable, Message: "the process was killed"}
		}
	}
	return s.Store.PutRun(ctx, r)
}

func (s *stopsAtQueued) stoppedRun() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runID
}

// TestABackgroundRunWhoseEnqueuerStopsBetweenItsTwoWritesEndsOnce is a
// violation the chaos harness found (issue 31): a background run's record
// was written queued, then its job enqueued, two commits; a replica
// SIGKILLed between them left a queued record that no job would ever
// start. The job is enqueued first now, and its worker, finding no record
// once a lease has passed, starts the run from its payload. Here the
// enqueuer stops at the record's write, killed (the write never lands) or
// paused (it lands after the run ended): the run ends exactly once, and
// the late queued write does not overwrite its end. With the record
// written first the job is never enqueued and the run never ends.
func TestABackgroundRunWhoseEnqueuerStopsBetweenItsTwoWritesEndsOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pipeline bool
		wakes    bool
	}{
		{name: "agent, enqueuer killed"},
		{name: "agent, enqueuer paused", wakes: true},
		{name: "pipeline, enqueuer killed", pipeline: true},
		{name: "pipeline, enqueuer paused", pipeline: true, wakes: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := &stopsAtQueued{Store: memory.New(), release: make(chan struct{}), wakes: tc.wakes}
				tb := newTestbed(t, modeltest.New(modeltest.Text("report")), []*core.Agent{textAgent("writer")}, withQueue(1), func(c *engine.Config) {
					c.Store = store
					c.Pipelines = map[string][]core.PipelineStep{"p": {{Type: core.StepAgent, AgentID: "writer"}}}
				})
				ctx := core.WithIdentity(t.Context(), &core.AuthIdentity{Subject: "ana"})
				type answer struct {
					d   core.Detached
					err error
				}
				answered := make(chan answer, 1)
				go func() {
					var a answer
					if tc.pipeline {
						a.d, a.err = tb.in.RunPipelineBackground(ctx, "p", "write", core.BackgroundOptions{})
					} else {
						a.d, a.err = tb.in.RunBackground(ctx, "writer", "write", core.RunOptions{}, core.BackgroundOptions{})
					}
					answered <- a
				}()
				synctest.Wait()
				runID := store.stoppedRun()
				if runID == "" {
					t.Fatal("the enqueuer never wrote a queued record")
				}
				rec := waitRecord(t, store.Store, runID, status(core.RunCompleted))
				if rec.StartedBy != core.OwnerKey(&core.AuthIdentity{Subject: "ana"}) {
					t.Fatalf("the run's record %+v, want it started by its caller", rec)
				}
				close(store.release)
				a := <-answered
				if tc.wakes && (a.err != nil || a.d.RunID != runID) {
					t.Fatalf("the woken enqueuer answered %+v, %v; want the run's id", a.d, a.err)
				}
				synctest.Wait()
				if rec, err := store.GetRun(t.Context(), runID); err != nil || rec.Status != core.RunCompleted {
					t.Fatalf("after the enqueuer's late write the record is %+v, %v; want it still completed", rec, err)
				}
				if n, last := terminals(t, store.Store, runID); n != 1 || last != core.TypeAgentRunEnd {
					t.Fatalf("the run's log holds %d terminal crumbs, ending with %q: want one agent:run:end", n, last)
				}
			})
		})
	}
}

// firstQueuedStops is a store whose first write of a queued record stops
// until released and then fails (its process was killed); later ones go
// through.
type firstQueuedStops struct {
	*memory.Store
	once    sync.Once
	release chan struct{}
}

func (s *firstQueuedStops) PutRun(ctx context.Context, r core.RunRecord) error {
	if r.Status == core.RunQueued && r.Attempt == 0 {
		first := false
		s.once.Do(func() { first = true })
		if first {
			<-s.release
			return &core.BreadError{Code: core.CodeStoreUnavailable, Message: "the process was killed"}
		}
	}
	return s.Store.PutRun(ctx, r)
}

// TestATickHandedOutAgainRecordsItsRunUnderTheJobsSession: a schedule
// tick's first attempt enqueued its run's job and died before the run's
// record; the tick, handed out again, found no record and recorded the run
// under a second session it opened, while the job (a queue adds no second
// job under one key) ran it in the first: the record named a session
// with no messages, and the run's turn sat in a session no record named.
// The worker runs a recorded run in its record's session now.
func TestATickHandedOutAgainRecordsItsRunUnderTheJobsSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &firstQueuedStops{Store: memory.New(), release: make(chan struct{})}
		tb := newTestbed(t, modeltest.New(modeltest.Text("tick")), []*core.Agent{textAgent("ticker")}, withQueue(1), func(c *engine.Config) {
			c.Store = store
		})
		ctx := t.Context()
		runID := engine.ScheduleRunID("tick", time.Unix(1_800_000_000, 0))
		first := make(chan error, 1)
		go func() {
			_, err := tb.in.StartTickForTest(ctx, runID, "ticker", "go")
			first <- err
		}()
		// The first attempt's job is queued, its record write hangs; the
		// tick is handed out again.
		synctest.Wait()
		d, err := tb.in.StartTickForTest(ctx, runID, "ticker", "go")
		if err != nil {
			t.Fatal(err)
		}
		rec := waitRecord(t, store.Store, runID, status(core.RunCompleted))
		close(store.release)
		<-first
		if rec.SessionID != d.SessionID {
			t.Fatalf("the run's record names session %s, the retried tick answered %s", rec.SessionID, d.SessionID)
		}
		msgs, err := store.GetMessages(ctx, rec.SessionID)
		if err != nil || len(msgs) != 2 {
			t.Fatalf("the record's session holds %d messages (%v): the run ran in another one", len(msgs), err)
		}
		if n, last := terminals(t, store.Store, runID); n != 1 || last != core.TypeAgentRunEnd {
			t.Fatalf("the run's log holds %d terminal crumbs, ending with %q: want one agent:run:end", n, last)
		}
	})
}
