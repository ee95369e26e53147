package engine_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// TestALoggedEndStandsWhateverWouldRetryTheLostRun: a run whose owner
// logged its end, then died before its record said so, leaves a running
// record whose lease lapses over a log that ends. Whoever finds it (a
// sweeper, or the worker its job is handed out to again) keeps the logged
// end and makes the record agree, even when the lost run would otherwise
// be run again: a background run whose onLost policy retries it, or a
// resume whose checkpoint is still there. Either would have gone on after
// the end every tail and replay saw: a second agent:run:start, a second
// continuation (issue 31).
func TestALoggedEndStandsWhateverWouldRetryTheLostRun(t *testing.T) {
	const id = "run-ended-unrecorded"
	for _, tc := range []struct {
		name string
		// resumed: the record names the checkpoint its dead owner resumed;
		// worker: the job, handed out again, finds the lapsed lease before
		// any sweeper does; retried: so does a retry of the resume.
		resumed, worker, retried bool
	}{
		{name: "onLost retry, found by a sweeper"},
		{name: "onLost retry, found by its job's worker", worker: true},
		{name: "a resume whose checkpoint is still there", resumed: true},
		{name: "a resume retried before any sweeper", resumed: true, retried: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := memory.New()
				ctx := context.Background()
				if _, err := store.CreateSession(ctx, core.NewSession{ID: "s", AgentID: "writer"}); err != nil {
					t.Fatal(err)
				}
				now := core.NowMillis()
				lease := 2 * time.Second
				rec := core.RunRecord{ID: id, AgentID: "writer", SessionID: "s", Status: core.RunRunning, Owner: "dead", LeaseUntil: now - 1, Attempt: 1, CreatedAt: now - 5000, UpdatedAt: now - 5000}
				if tc.worker || tc.retried {
					// Live when the instance's first sweep runs; its next
					// sweep is a lease/2 away.
					lease, rec.LeaseUntil = time.Minute, now+100
				}
				base := core.CrumbBase{AgentID: "writer", RunID: id, SessionID: "s", Timestamp: now - 4000}
				entries := []core.CrumbLogEntry{{RunID: id, Seq: 1, SessionID: "s", AgentID: "writer", Type: core.TypeAgentRunStart, Crumb: &core.AgentRunStart{CrumbBase: base}, CreatedAt: now - 4000}}
				if tc.resumed {
					rec.Attempt, rec.CheckpointID = 0, "cp-1"
					cp := core.CheckpointRecord{ID: "cp-1", AgentID: "writer", RunID: id, SessionID: "s", ToolName: "human_ok", ToolCallID: "h1", CreatedAt: now - 4000, ClaimedBy: "dead", ClaimedUntil: now - 1}
					if err := store.SaveCheckpoint(ctx, cp); err != nil {
						t.Fatal(err)
					}
					entries = append(entries,
						core.CrumbLogEntry{RunID: id, Seq: 2, SessionID: "s", AgentID: "writer", Type: core.TypeHumanRequired, Crumb: &core.HumanRequired{CrumbBase: base, CheckpointID: "cp-1"}, CreatedAt: now - 4000},
						core.CrumbLogEntry{RunID: id, Seq: 3, SessionID: "s", AgentID: "writer", Type: core.TypeHumanResumed, Crumb: &core.HumanResumed{CrumbBase: base, CheckpointID: "cp-1"}, CreatedAt: now - 3000})
				}
				end := base
				end.Seq = int64(len(entries) + 1)
				entries = append(entries, core.CrumbLogEntry{RunID: id, Seq: end.Seq, SessionID: "s", AgentID: "writer", Type: core.TypeAgentRunEnd, Crumb: &core.AgentRunEnd{CrumbBase: end, Output: "done"}, CreatedAt: now - 2000})
				if err := store.PutRun(ctx, rec); err != nil {
					t.Fatal(err)
				}
				if err := store.AppendCrumbs(ctx, entries); err != nil {
					t.Fatal(err)
				}
				tb := newTestbed(t, modeltest.New(modeltest.Text("a second attempt")), []*core.Agent{retryAgent("writer", 3)}, withQueue(1),
					func(c *engine.Config) { c.Store, c.RunLease = store, lease })
				if tc.retried {
					time.Sleep(200 * time.Millisecond) // fake time: the lease and the claim lapse
					if _, err := collect(tb.in.Resume(ctx, "cp-1", map[string]any{"approved": true})); !errors.Is(err, core.ErrCheckpointNotFound) {
						t.Fatalf("the retried resume of a continuation whose end was logged: %v, want CHECKPOINT_NOT_FOUND", err)
					}
				}
				if tc.worker {
					time.Sleep(200 * time.Millisecond) // fake time: the lease lapses
					if err := tb.in.WorkJobForTest(ctx, engine.RunJobForTest(id, "writer", "the job", "s", "")); err != nil {
						t.Fatal(err)
					}
				}
				got := waitRecord(t, store, id, func(r core.RunRecord) bool { return r.Status != core.RunRunning })
				synctest.Wait()
				got = getRun(t, store, id)
				if got.Status != core.RunCompleted || got.ErrorCode != "" || got.Owner != "" || got.CheckpointID != "" {
					t.Fatalf("the record of a run whose end was logged: %+v, want completed", got)
				}
				types := loggedTypes(t, store, id)
				if n, last := terminals(t, store, id); n != 1 || last != core.TypeAgentRunEnd || count(types, core.TypeAgentRunStart) != 1 {
					t.Fatalf("the log is %v: want the owner's one start and agent:run:end alone", types)
				}
				if _, err := store.GetCheckpoint(ctx, "cp-1"); tc.resumed && !errors.Is(err, core.ErrCheckpointNotFound) {
					t.Fatalf("the resumed checkpoint of the ended run is still there (%v)", err)
				}
			})
		})
	}
}
