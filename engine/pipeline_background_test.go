package engine_test

import (
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// A background pipeline has its own record and journal under its run id:
// agent:run:start, each step's start and end, then agent:run:end with the
// last step's output. The same on
// an Instance goroutine and through a job queue.
func TestBackgroundPipelineJournal(t *testing.T) {
	for _, queue := range []bool{false, true} {
		name := map[bool]string{false: "goroutine", true: "job queue"}[queue]
		t.Run(name, func(t *testing.T) {
			mutate := []func(*engine.Config){func(c *engine.Config) {
				c.Pipelines = map[string][]core.PipelineStep{"review": {{AgentID: "draft"}, {AgentID: "polish"}}}
			}}
			if queue {
				mutate = append(mutate, withQueue(1))
			}
			tb := newTestbed(t, modeltest.New(), []*core.Agent{echoAgent("draft", "draft of "), echoAgent("polish", "polished ")}, mutate...)
			ctx := core.WithIdentity(t.Context(), &core.AuthIdentity{Subject: "ana"})
			d, err := tb.in.RunPipelineBackground(ctx, "review", "the plan", core.BackgroundOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rec := waitRecord(t, tb.store, d.RunID, status(core.RunCompleted))
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
}
