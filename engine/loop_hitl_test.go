package engine_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// A loop iteration whose pipeline asks a human suspends the host with it;
// answering resumes the pipeline, records the iteration, answers the host's
// loop tool call and continues the host, on another instance, where the
// loop goes on: the host iterates again and finishes it.
func TestLoopIterationWaitsForAHuman(t *testing.T) {
	store := keepOpen{memory.New()}
	// Each instance's scripted models answer the turns asked of it there.
	start := func(hostTurns, askerTurns []modeltest.Turn) *engine.Instance {
		host, _ := loopHost(core.LoopConfig{Pool: []string{"asker", "critic"}, MaxIterations: 3}, hostTurns...)
		asker := askAgent()
		asker.ID = "asker"
		asker.Providers = modeltest.New(askerTurns...).Registry("mock")
		in, err := engine.New(engine.Config{Store: store, Agents: []*core.Agent{host, asker, echoAgent("critic", "c:")}})
		if err != nil {
			t.Fatal(err)
		}
		if err := in.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = in.Stop(context.Background()) })
		return in
	}

	a := start(
		[]modeltest.Turn{call("core_start_loop", map[string]any{"pipeline": []string{"asker", "critic"}, "input": "topic"})},
		[]modeltest.Turn{modeltest.ToolCall("human_approve_publish", map[string]string{})},
	)
	cs, err := collect(a.Run(context.Background(), "host", "go", core.RunOptions{}))
	if err != nil {
		t.Fatalf("the run: %v (crumbs %v)", err, types(cs))
	}
	if got, want := loopTrace(cs), []string{"start:asker,critic", "it-start"}; !slices.Equal(got, want) {
		t.Errorf("before the human: %q, want %q", got, want)
	}
	hr := suspendOn(t, cs)
	if hr.AgentID != "asker" {
		t.Fatalf("the human:required is the pool agent's: %+v", hr)
	}
	rec, _ := store.GetRun(context.Background(), cs[0].Base().RunID)
	if rec.Status != core.RunSuspended {
		t.Errorf("the host run waits: %+v", rec)
	}
	loops, _ := store.ListLoops(context.Background(), core.LoopFilter{AgentID: "host"})
	if len(loops) != 1 || loops[0].Status != core.LoopRunning || loops[0].Iterations != 0 {
		t.Fatalf("the loop is still running, no iteration done: %+v", loops)
	}
	_ = a.Stop(context.Background())

	b := start(
		[]modeltest.Turn{call("core_iterate_loop", map[string]any{}), call("core_finish_loop", map[string]any{}), modeltest.Text("final")},
		[]modeltest.Turn{modeltest.Text("asked"), modeltest.Text("again")},
	)
	cont, err := collect(b.Resume(context.Background(), hr.CheckpointID, okAnswer))
	if err != nil {
		t.Fatalf("resume: %v (crumbs %v)", err, types(cont))
	}
	want := []string{`it-end="c:asked"`, "it-start", `it-end="c:again"`, `end:completed="c:again"`}
	if got := loopTrace(cont); !slices.Equal(got, want) {
		t.Errorf("after the human: %q, want %q", got, want)
	}
	last := cont[len(cont)-1]
	if end, ok := last.(*core.AgentRunEnd); !ok || end.AgentID != "host" || end.Output != "final" {
		t.Errorf("the host's run ends the resume: %T %+v", last, last)
	}
	detail, err := store.GetLoop(context.Background(), loops[0].ID)
	if err != nil || detail.Loop.Status != core.LoopCompleted || len(detail.Iterations) != 2 {
		t.Fatalf("loop after the resume: %+v %v", detail, err)
	}
	var in0 any
	_ = json.Unmarshal(detail.Iterations[0].Input, &in0)
	if in0 != "topic" || string(detail.Iterations[0].Output) != `"c:asked"` || detail.Iterations[0].Index != 1 {
		t.Errorf("the suspended iteration's record: %+v", detail.Iterations[0])
	}
	if left, _ := store.ListCheckpoints(context.Background()); len(left) != 0 {
		t.Errorf("checkpoints left: %+v", left)
	}
}
