package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// setAgent has two human tools and an ask-gated weather tool, so one turn
// can call several of them at once.
func setAgent() *core.Agent {
	return &core.Agent{
		ID: "planner", Model: mockModel(),
		Tools:       []core.Tool{weatherTool()},
		Permissions: core.Permissions{Ask: []string{"tool:weather"}},
		HumanTools: []core.HumanToolDef{
			{Name: "pick_date", Prompt: "Which date?", Schema: json.RawMessage(`{"type":"object","properties":{"date":{"type":"string"}}}`)},
			{Name: "pick_city", Prompt: "Which city?", Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
		},
	}
}

// setTurn calls both human tools and the gated weather tool in one turn.
func setTurn() modeltest.Turn {
	return modeltest.ToolCalls(
		modeltest.Call{ID: "d", Name: "human_pick_date", Args: map[string]string{}},
		modeltest.Call{ID: "w", Name: "tool_weather", Args: cityArgs{City: "Rome"}},
		modeltest.Call{ID: "c", Name: "human_pick_city", Args: map[string]string{}},
	)
}

// humans returns the human:required crumbs of a stream, in order.
func humans(cs []core.Crumb) []*core.HumanRequired {
	var out []*core.HumanRequired
	for _, c := range cs {
		if hr, ok := c.(*core.HumanRequired); ok {
			out = append(out, hr)
		}
	}
	return out
}

func TestHumanSetEveryCallIsAnsweredThenTheRunContinuesOnce(t *testing.T) {
	tb := newTestbed(t, modeltest.New(setTurn(), modeltest.Text("Rome on Friday, sunny.")), []*core.Agent{setAgent()})
	cs, err := tb.run(t, "planner", "plan a trip", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, cs, core.TypeAgentRunStart, core.TypeHumanRequired, core.TypeHumanRequired, core.TypeHumanRequired)
	hrs := humans(cs)
	var ids []string
	for _, hr := range hrs {
		ids = append(ids, hr.CheckpointID)
	}
	for i, hr := range hrs {
		if !slices.Equal(hr.Set, ids) || core.EndsCall(hr) != (i == 2) {
			t.Errorf("human:required %d names the set %v, want %v (only the last ends the call)", i, hr.Set, ids)
		}
	}
	if hrs[0].ToolName != "human_pick_date" || hrs[1].ToolName != "tool_weather" || hrs[1].Kind != core.HumanApproval || hrs[2].Prompt != "Which city?" {
		t.Errorf("one checkpoint per call, in call order: %+v %+v %+v", hrs[0], hrs[1], hrs[2])
	}
	rec, err := tb.store.GetRun(context.Background(), hrs[0].RunID)
	if err != nil || rec.Status != core.RunSuspended {
		t.Fatalf("the run is suspended: %+v, %v", rec, err)
	}

	// Answered out of order: the first two answers end their streams with
	// the run still waiting, naming what it waits on; the model is not
	// called.
	answers := []struct {
		hr      *core.HumanRequired
		resp    any
		waiting []string
	}{
		{hrs[2], map[string]string{"city": "Rome"}, []string{ids[0], ids[1]}},
		{hrs[0], map[string]string{"date": "Friday"}, []string{ids[1]}},
	}
	for _, a := range answers {
		cont, err := collect(tb.in.Resume(context.Background(), a.hr.CheckpointID, a.resp))
		if err != nil {
			t.Fatalf("resume %s: %v", a.hr.ToolName, err)
		}
		want := []string{core.TypeHumanResumed}
		for range a.waiting {
			want = append(want, core.TypeHumanRequired)
		}
		wantTypes(t, cont, want...)
		for i, hr := range humans(cont) {
			if hr.CheckpointID != a.waiting[i] || !slices.Equal(hr.Set, a.waiting) || core.EndsCall(hr) != (i == len(a.waiting)-1) {
				t.Errorf("after answering %s, waiting crumb %d: %+v", a.hr.ToolName, i, hr)
			}
		}
		if _, err := tb.store.GetCheckpoint(context.Background(), a.hr.CheckpointID); !errors.Is(err, core.ErrCheckpointNotFound) {
			t.Errorf("an answered member of the set is gone: %v", err)
		}
		rec, _ := tb.store.GetRun(context.Background(), a.hr.RunID)
		if rec.Status != core.RunSuspended || rec.CheckpointID == "" || rec.CheckpointID == a.hr.CheckpointID {
			t.Errorf("after answering %s the run waits on a sibling: %+v", a.hr.ToolName, rec)
		}
	}
	if n := tb.model.Calls(); n != 1 {
		t.Fatalf("the model was called %d times before the set was answered", n)
	}
	// A second answer to an answered member is refused.
	if _, err := collect(tb.in.Resume(context.Background(), hrs[0].CheckpointID, map[string]string{"date": "Monday"})); !isCode(err, core.CodeCheckpointNotFound) {
		t.Errorf("answering a member twice: %v", err)
	}

	cont, err := collect(tb.in.Resume(context.Background(), hrs[1].CheckpointID, map[string]bool{"approved": true}))
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, cont, core.TypeHumanResumed, core.TypeToolCall, core.TypeToolResult, core.TypeTextDelta, core.TypeAgentRunEnd)
	if n := tb.model.Calls(); n != 2 {
		t.Errorf("the model was called %d times, want 2", n)
	}
	got := map[string]string{}
	for _, m := range tb.model.Requests()[1].Messages {
		for _, p := range m.Parts {
			if p.Type == core.PartToolResult {
				got[p.ToolCallID] = string(p.Output)
			}
		}
	}
	want := map[string]string{"d": `{"date":"Friday"}`, "c": `{"city":"Rome"}`, "w": `{"city":"Rome","sky":"sunny"}`}
	for id, out := range want {
		if got[id] != out {
			t.Errorf("the continuation's history answers %s with %s, want %s", id, got[id], out)
		}
	}
	rec, _ = tb.store.GetRun(context.Background(), hrs[0].RunID)
	if rec.Status != core.RunCompleted {
		t.Errorf("the run's record after the last answer: %+v", rec)
	}
	left, _ := tb.store.ListCheckpoints(context.Background())
	if len(left) != 0 {
		t.Errorf("checkpoints left: %+v", left)
	}
}

// Every member of a set answered at the same time: exactly one resume
// continues the run, whatever the interleaving.
func TestHumanSetConcurrentAnswersContinueOnce(t *testing.T) {
	for round := range 20 {
		model := modeltest.New(modeltest.ToolCalls(
			modeltest.Call{ID: "d", Name: "human_pick_date", Args: map[string]string{}},
			modeltest.Call{ID: "c", Name: "human_pick_city", Args: map[string]string{}},
		), modeltest.Text("done"))
		tb := newTestbed(t, model, []*core.Agent{setAgent()})
		cs, err := tb.run(t, "planner", "plan", core.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		hrs := humans(cs)
		if len(hrs) != 2 {
			t.Fatalf("round %d: %d human:required", round, len(hrs))
		}
		var wg sync.WaitGroup
		ends := make([]bool, len(hrs))
		for i, hr := range hrs {
			wg.Go(func() {
				cont, err := collect(tb.in.Resume(context.Background(), hr.CheckpointID, map[string]string{}))
				if err != nil {
					t.Errorf("round %d: resume %d: %v", round, i, err)
				}
				ends[i] = len(cont) > 0 && cont[len(cont)-1].CrumbType() == core.TypeAgentRunEnd
			})
		}
		wg.Wait()
		if n := model.Calls(); n != 2 {
			t.Fatalf("round %d: the model was called %d times, want 2 (one continuation)", round, n)
		}
		if ends[0] == ends[1] {
			t.Fatalf("round %d: exactly one resume must end the run: %v", round, ends)
		}
	}
}

// The resume that completes a set dies before the continuation ends (its
// instance stops mid-model-call): the claim is given back, and a retry on
// another instance continues the run, the answer recorded once.
func TestHumanSetCompleterRetriedAfterItsInstanceStopped(t *testing.T) {
	store := keepOpen{memory.New()}
	newInstance := func(model *modeltest.Model) *engine.Instance {
		in, err := engine.New(engine.Config{Store: store, Agents: []*core.Agent{setAgent()}, Providers: model.Registry("mock")})
		if err != nil {
			t.Fatal(err)
		}
		if err := in.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return in
	}
	reached := make(chan struct{})
	a := newInstance(modeltest.New(modeltest.ToolCalls(
		modeltest.Call{ID: "d", Name: "human_pick_date", Args: map[string]string{}},
		modeltest.Call{ID: "c", Name: "human_pick_city", Args: map[string]string{}},
	), modeltest.Block(reached)))
	cs, err := collect(a.Run(context.Background(), "planner", "plan", core.RunOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	hrs := humans(cs)
	if _, err := collect(a.Resume(context.Background(), hrs[0].CheckpointID, map[string]string{"date": "Friday"})); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := collect(a.Resume(context.Background(), hrs[1].CheckpointID, map[string]string{"city": "Rome"}))
		done <- err
	}()
	<-reached // the continuation is in its model call
	_ = a.Stop(context.Background())
	if err := <-done; err == nil {
		t.Fatal("a resume cut short by Stop reported no error")
	}

	bModel := modeltest.New(modeltest.Text("Rome on Friday."))
	b := newInstance(bModel)
	defer b.Stop(context.Background())
	cont, err := collect(b.Resume(context.Background(), hrs[1].CheckpointID, map[string]string{"city": "Rome"}))
	if err != nil {
		t.Fatalf("the completer's retry: %v", err)
	}
	wantTypes(t, cont, core.TypeHumanResumed, core.TypeTextDelta, core.TypeAgentRunEnd)
	results := 0
	for _, m := range bModel.Requests()[0].Messages {
		for _, p := range m.Parts {
			if p.Type == core.PartToolResult {
				results++
			}
		}
	}
	if results != 2 {
		t.Errorf("the retried continuation sees %d answers, want 2 (each recorded once)", results)
	}
}
