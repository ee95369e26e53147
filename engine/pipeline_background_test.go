package engine_test

import (
	"testing"
	"testing/synctest"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// A background pipeline has its own record and journal under its run id:
// agent:run:start, each step's start and end, then agent:run:end with the
// last step's output, and its webhook hears the pipeline's end. The same on
// an Instance goroutine and through a job queue.
func TestBackgroundPipelineJournal(t *testing.T) {
	for _, queue := range []bool{false, true} {
		name := map[bool]string{false: "goroutine", true: "job queue"}[queue]
		t.Run(name, func(t *testing.T) {
			mutate := []func(*engine.Config){withWebhooks, func(c *engine.Config) {
				c.Pipelines = map[string][]core.PipelineStep{"review": {{AgentID: "draft"}, {AgentID: "polish"}}}
			}}
			if queue {
				mutate = append(mutate, withQueue(1))
			}
			tb := newTestbed(t, modeltest.New(), []*core.Agent{echoAgent("draft", "draft of "), echoAgent("polish", "polished ")}, mutate...)
			ctx := core.WithIdentity(t.Context(), &core.AuthIdentity{Subject: "ana"})
			hook := newWebhookReceiver(t)
			d, err := tb.in.RunPipelineBackground(ctx, "review", "the plan", core.BackgroundOptions{Webhook: hook.srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			// The webhook hears of the run once its record is final.
			if got := hook.wait(t, 1)[0].record(); got.ID != d.RunID || got.PipelineID != "review" || got.Status != core.RunCompleted {
				t.Fatalf("webhook delivery %+v, want the pipeline run completed", got)
			}
			rec, err := tb.store.GetRun(t.Context(), d.RunID)
			if err != nil {
				t.Fatal(err)
			}
			if rec.PipelineID != "review" || rec.AgentID != engine.PipelineAgentID || rec.StartedBy != core.OwnerKey(&core.AuthIdentity{Subject: "ana"}) {
				t.Fatalf("record %+v", rec)
			}
			entries, err := tb.store.GetCrumbs(t.Context(), d.RunID, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			var types []string
			for i, e := range entries {
				types = append(types, e.Type)
				if e.Seq != int64(i+1) {
					t.Fatalf("journal seq %d at %d", e.Seq, i)
				}
			}
			want := []string{core.TypeAgentRunStart, core.TypePipelineStepStart, core.TypePipelineStepEnd, core.TypePipelineStepStart, core.TypePipelineStepEnd, core.TypeAgentRunEnd}
			if asJSON(t, types) != asJSON(t, want) {
				t.Fatalf("journal %v, want %v", types, want)
			}
			end := entries[len(entries)-1].Crumb.(*core.AgentRunEnd)
			if end.Output != "polished draft of the plan" {
				t.Fatalf("output %#v", end.Output)
			}
			if last := entries[4].Crumb.(*core.PipelineStepEnd); last.StepIndex != 1 || last.PipelineID != "review" || last.AgentID != "polish" {
				t.Fatalf("the second step's end %+v", last)
			}
		})
	}
}

// Cancel ends a running background pipeline; a queued one is cancelled in
// the queue and never starts; an unknown pipeline is refused up front.
func TestBackgroundPipelineCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reached := make(chan struct{})
		slow, model := scripted("slow", modeltest.Block(reached, "thinking"))
		tb := newTestbed(t, modeltest.New(), []*core.Agent{slow}, withQueue(1), func(c *engine.Config) {
			c.Pipelines = map[string][]core.PipelineStep{"p": {{AgentID: "slow"}}}
		})
		if _, err := tb.in.RunPipelineBackground(t.Context(), "nope", nil, core.BackgroundOptions{}); err == nil {
			t.Fatal("an unknown pipeline was accepted")
		} else {
			wantCode(t, err, core.CodePipelineNotFound)
		}
		running, err := tb.in.RunPipelineBackground(t.Context(), "p", "x", core.BackgroundOptions{})
		if err != nil {
			t.Fatal(err)
		}
		<-reached
		queued, err := tb.in.RunPipelineBackground(t.Context(), "p", "y", core.BackgroundOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := tb.in.CancelQueued(t.Context(), queued.RunID); !ok || err != nil {
			t.Fatalf("CancelQueued = %v, %v", ok, err)
		}
		if !tb.in.Cancel(running.RunID) {
			t.Fatal("Cancel did not find the running pipeline")
		}
		rec := waitRecord(t, tb.store, running.RunID, status(core.RunCancelled))
		if rec.ErrorCode != core.CodeRunCancelled {
			t.Fatalf("record %+v", rec)
		}
		if got := loggedTypes(t, tb.store, running.RunID); got[len(got)-1] != core.TypeAgentError {
			t.Fatalf("journal of the cancelled pipeline %v", got)
		}
		waitRecord(t, tb.store, queued.RunID, status(core.RunCancelled))
		if model.Calls() != 1 {
			t.Fatalf("model called %d times: the cancelled queued pipeline ran", model.Calls())
		}
	})
}

// lostPipeline leaves what a process killed during step 1 of a background
// pipeline leaves: its journal up to that step's start, step 0's output in
// it, and its record running under a lapsed lease.
func lostPipeline(t *testing.T, tb *testbed, runID string) {
	t.Helper()
	ctx := t.Context()
	now := core.NowMillis() - 5_000
	base := func(agent string, seq int64) core.CrumbBase {
		return core.CrumbBase{RunID: runID, AgentID: agent, Seq: seq, Timestamp: now}
	}
	crumbs := []core.Crumb{
		&core.AgentRunStart{CrumbBase: base(engine.PipelineAgentID, 1), Input: "the plan"},
		&core.PipelineStepStart{CrumbBase: base("draft", 2), PipelineID: "review", StepIndex: 0},
		&core.PipelineStepEnd{CrumbBase: base("draft", 3), PipelineID: "review", StepIndex: 0, Output: "draft of the plan"},
		&core.PipelineStepStart{CrumbBase: base("polish", 4), PipelineID: "review", StepIndex: 1},
	}
	var entries []core.CrumbLogEntry
	for _, c := range crumbs {
		b := c.Base()
		entries = append(entries, core.CrumbLogEntry{RunID: runID, Seq: b.Seq, AgentID: b.AgentID, Type: c.CrumbType(), Crumb: c, CreatedAt: now})
	}
	if err := tb.store.AppendCrumbs(ctx, entries); err != nil {
		t.Fatal(err)
	}
	// The record last, as the journal was written while the lease was
	// live: the instance's sweeper may find the lapsed lease from here on
	// (before, it could find the record with an empty journal, end the
	// run with RUN_LOST at seq 1, and the journal's write failed).
	if err := tb.store.PutRun(ctx, core.RunRecord{ID: runID, AgentID: engine.PipelineAgentID, PipelineID: "review", Status: core.RunRunning,
		Owner: "dead-replica", LeaseUntil: now + 1_000, Attempt: 1, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
}

// A background pipeline lost mid-step restarts after its last finished
// step when that step's agent retries (onLost), and ends with RUN_LOST when
// it does not.
func TestLostBackgroundPipeline(t *testing.T) {
	for _, retry := range []bool{true, false} {
		t.Run(map[bool]string{true: "onLost retry", false: "onLost fail"}[retry], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				draft, draftModel := scripted("draft", modeltest.Text("must not run again"))
				polish := echoAgent("polish", "polished ")
				if retry {
					polish.OnLost = core.LostPolicy{Action: core.LostRetry}
				}
				tb := newTestbed(t, modeltest.New(), []*core.Agent{draft, polish}, withQueue(1), func(c *engine.Config) {
					c.Pipelines = map[string][]core.PipelineStep{"review": {{AgentID: "draft"}, {AgentID: "polish"}}}
				})
				lostPipeline(t, tb, "pipe-1")
				if err := tb.in.WorkJobForTest(t.Context(), engine.PipelineJobForTest("pipe-1", "review", "the plan")); err != nil {
					t.Fatal(err)
				}
				if !retry {
					// The lease sweeper may find the lapsed lease before the
					// worker does and write the run's end on its own goroutine.
					var types []string
					settle(t, "the journal ends with agent:error", func() bool {
						types = loggedTypes(t, tb.store, "pipe-1")
						return types[len(types)-1] == core.TypeAgentError
					})
					if rec, _ := tb.store.GetRun(t.Context(), "pipe-1"); rec.Status != core.RunLost || rec.ErrorCode != core.CodeRunLost {
						t.Fatalf("record %+v, journal %v: want lost with RUN_LOST", rec, types)
					}
					return
				}
				rec := waitRecord(t, tb.store, "pipe-1", status(core.RunCompleted))
				if rec.Attempt != 2 {
					t.Fatalf("record %+v, want attempt 2", rec)
				}
				entries, _ := tb.store.GetCrumbs(t.Context(), "pipe-1", 4, 0)
				var after []string
				for _, e := range entries {
					after = append(after, e.Type)
				}
				want := []string{core.TypeAgentRunStart, core.TypePipelineStepStart, core.TypePipelineStepEnd, core.TypeAgentRunEnd}
				if asJSON(t, after) != asJSON(t, want) {
					t.Fatalf("journal after the lost attempt %v, want %v", after, want)
				}
				if s := entries[1].Crumb.(*core.PipelineStepStart); s.StepIndex != 1 {
					t.Fatalf("the retry started at step %d, want 1", s.StepIndex)
				}
				if out := entries[3].Crumb.(*core.AgentRunEnd).Output; out != "polished draft of the plan" {
					t.Fatalf("output %#v", out)
				}
				if draftModel.Calls() != 0 {
					t.Fatal("the finished step ran again")
				}
			})
		})
	}
}
