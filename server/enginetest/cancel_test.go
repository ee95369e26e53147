package enginetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/server"
)

// The cancel route against the real engine: a run executing here, one
// waiting for a human, one waiting inside a pipeline.

func TestCancelRoute(t *testing.T) {
	reached := make(chan struct{})
	f := newFixture(t, engine.Config{}, modeltest.Block(reached, "thinking"))
	ts := f.serve(t, server.Options{})

	if r := do(t, ts.URL, "POST", "/runs/ghost/cancel", ""); r.status != 404 || r.errorCode(t) != core.CodeNotFound {
		t.Fatalf("cancel unknown = %d %s", r.status, r.body)
	}

	runID := make(chan string, 1)
	ended := make(chan error, 1)
	go func() {
		var last error
		for c, err := range f.inst.Run(context.Background(), "writer", "go", core.RunOptions{}) {
			if s, ok := c.(*core.AgentRunStart); ok {
				runID <- s.RunID
			}
			last = err
		}
		ended <- last
	}()
	id := <-runID
	<-reached
	if r := do(t, ts.URL, "POST", "/runs/"+id+"/cancel", ""); r.status != 200 || string(r.body) != "{\"ok\":true}\n" {
		t.Fatalf("cancel = %d %s", r.status, r.body)
	}
	if err := <-ended; !errors.Is(err, core.ErrRunCancelled) {
		t.Fatalf("run ended with %v, want RUN_CANCELLED", err)
	}
}

// POST /runs/{id}/cancel ends a run that waits for a human: the passive
// stream of the run ends with RUN_CANCELLED and the checkpoint is gone.
func TestCancelRouteEndsASuspendedRun(t *testing.T) {
	asker := &core.Agent{ID: "asker", Model: core.ModelRef{Provider: "scripted", Model: "m3"},
		HumanTools: []core.HumanToolDef{{Name: "confirm", Schema: json.RawMessage(`{"type":"object"}`)}}}
	clock := &aheadClock{}
	f := newFixture(t, engine.Config{Agents: []*core.Agent{asker}, Clock: clock}, modeltest.ToolCall("human_confirm", map[string]string{}))
	ts := f.serve(t, server.Options{})
	var hr *core.HumanRequired
	for c := range f.inst.Run(context.Background(), "asker", "go", core.RunOptions{}) {
		if h, ok := c.(*core.HumanRequired); ok {
			hr = h
		}
	}
	if hr == nil {
		t.Fatal("the run did not suspend")
	}
	// A resume in flight (its claim) wins: 409, and the run still waits.
	now := time.Now()
	if _, err := f.store.ClaimCheckpoint(context.Background(), hr.CheckpointID, "elsewhere", now.UnixMilli(), now.Add(200*time.Millisecond).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	if r := do(t, ts.URL, "POST", "/runs/"+hr.RunID+"/cancel", ""); r.status != 409 || r.errorCode(t) != core.CodeCheckpointClaimed {
		t.Fatalf("cancel during a resume = %d %s", r.status, r.body)
	}
	clock.later(time.Hour) // the claim lapses on the engine's clock
	if r := do(t, ts.URL, "POST", "/runs/"+hr.RunID+"/cancel", ""); r.status != 200 {
		t.Fatalf("cancel = %d %s", r.status, r.body)
	}
	r := do(t, ts.URL, "GET", "/runs/"+hr.RunID+"/stream", "")
	if !strings.Contains(string(r.body), `"code":"RUN_CANCELLED"`) {
		t.Fatalf("the run's stream does not end cancelled:\n%s", r.body)
	}
	if r := do(t, ts.URL, "POST", "/resume/"+hr.CheckpointID, `{}`); !strings.Contains(string(r.body), core.CodeCheckpointNotFound) {
		t.Errorf("resume after the cancel = %d %s", r.status, r.body)
	}
	if r := do(t, ts.URL, "POST", "/runs/"+hr.RunID+"/cancel", ""); r.status != 404 {
		t.Errorf("a second cancel = %d %s", r.status, r.body)
	}
}

// A run waiting inside a pipeline is not cancelled alone: 501, and it
// still waits.
func TestCancelRouteRefusesARunWaitingInAPipeline(t *testing.T) {
	asker := &core.Agent{ID: "asker", Model: core.ModelRef{Provider: "scripted", Model: "m3"},
		HumanTools: []core.HumanToolDef{{Name: "confirm", Schema: json.RawMessage(`{"type":"object"}`)}}}
	f := newFixture(t, engine.Config{Agents: []*core.Agent{asker},
		Pipelines: map[string][]core.PipelineStep{"p": {{Type: core.StepAgent, AgentID: "asker"}}}},
		modeltest.ToolCall("human_confirm", map[string]string{}))
	ts := f.serve(t, server.Options{})
	var hr *core.HumanRequired
	for c := range f.inst.RunPipeline(context.Background(), "p", "go") {
		if h, ok := c.(*core.HumanRequired); ok {
			hr = h
		}
	}
	if hr == nil {
		t.Fatal("the pipeline did not suspend")
	}
	if r := do(t, ts.URL, "POST", "/runs/"+hr.RunID+"/cancel", ""); r.status != 501 || r.errorCode(t) != core.CodeNotImplemented {
		t.Fatalf("cancel = %d %s", r.status, r.body)
	}
	if _, err := f.store.GetCheckpoint(context.Background(), hr.CheckpointID); err != nil {
		t.Errorf("the refused cancel removed the checkpoint: %v", err)
	}
}
