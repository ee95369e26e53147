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

// TestAStopHandsBackgroundRunsOverPerTheirOnLost is a violation the chaos
// harness found (issue 31): a SIGTERM drain cancelled the draining
// replica's background runs for good (cancelled RUN_CANCELLED, their jobs
// done). A background run cut by its instance's stop now follows its
// agent's onLost policy, as when its process dies: retry puts it back in
// the queue (record queued, attempt kept, no end logged; its job snoozed
// for another replica's worker), fail ends it lost with one RUN_LOST.
func TestAStopHandsBackgroundRunsOverPerTheirOnLost(t *testing.T) {
	for _, tc := range []struct {
		name   string
		agent  *core.Agent
		snooze bool           // the job is put back, not done
		status core.RunStatus // the record after the stop
		ends   int            // terminal crumbs logged
	}{
		{"onLost retry: back to the queue", retryAgent("writer", 3), true, core.RunQueued, 0},
		{"onLost fail: lost", textAgent("writer"), false, core.RunLost, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reached := make(chan struct{})
				store := memory.New()
				tb := newTestbed(t, modeltest.New(modeltest.Block(reached, "working")), []*core.Agent{tc.agent}, withQueue(1),
					func(c *engine.Config) { c.Store = keptOpen{store} })
				ctx := context.Background()
				if _, err := store.CreateSession(ctx, core.NewSession{ID: "s", AgentID: "writer"}); err != nil {
					t.Fatal(err)
				}
				if err := store.PutRun(ctx, core.RunRecord{ID: "run-1", AgentID: "writer", SessionID: "s", Status: core.RunQueued, CreatedAt: 1, UpdatedAt: 1}); err != nil {
					t.Fatal(err)
				}
				worked := make(chan error, 1)
				go func() {
					worked <- tb.in.WorkJobForTest(context.Background(), engine.RunJobForTest("run-1", "writer", "the job", "s", ""))
				}()
				<-reached
				if err := tb.in.Stop(ctx); err != nil {
					t.Fatal(err)
				}
				err := <-worked
				var snooze *core.JobSnooze
				if got := errors.As(err, &snooze); got != tc.snooze {
					t.Fatalf("the job returned %v; snoozed = %v, want %v", err, got, tc.snooze)
				}
				rec := getRun(t, store, "run-1")
				if rec.Status != tc.status || rec.Attempt != 1 || rec.Owner != "" {
					t.Fatalf("the record after the stop: %+v, want %s at attempt 1", rec, tc.status)
				}
				if tc.status == core.RunLost && rec.ErrorCode != core.CodeRunLost {
					t.Fatalf("the lost record's code: %q", rec.ErrorCode)
				}
				if types := loggedTypes(t, store, "run-1"); count(types, core.TypeAgentError)+count(types, core.TypeAgentRunEnd) != tc.ends {
					t.Fatalf("crumb log = %v, want %d terminal crumbs", types, tc.ends)
				}
			})
		})
	}
}

// keptOpen is a store Stop does not close, so a test reads it afterwards.
type keptOpen struct{ *memory.Store }

func (keptOpen) Close() error { return nil }
