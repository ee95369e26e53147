package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"slices"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// scripted is an agent with its own scripted model.
func scripted(id string, turns ...modeltest.Turn) (*core.Agent, *modeltest.Model) {
	m := modeltest.New(turns...)
	return &core.Agent{ID: id, Model: core.ModelRef{Provider: "own", Model: id}, Providers: m.Registry("own")}, m
}

// echo answers with a prefix and its input, through a fake model that reads
// the last user message.
type echoModel struct{ prefix string }

func (e echoModel) Stream(_ context.Context, req core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	return func(yield func(core.ModelEvent, error) bool) {
		msgs := req.Messages
		text := msgs[len(msgs)-1].Parts[0].Text
		if yield(core.ModelEvent{Type: core.EventTextDelta, Delta: e.prefix + text}, nil) {
			yield(modeltest.Finish(core.FinishStop), nil)
		}
	}
}

func echoAgent(id, prefix string) *core.Agent {
	return &core.Agent{ID: id, Model: core.ModelRef{Provider: "echo", Model: id}, Providers: core.ProviderRegistry{
		"echo": func(string) (core.LanguageModel, error) { return echoModel{prefix}, nil },
	}}
}

func stepTrace(cs []core.Crumb) []string {
	var out []string
	for _, c := range cs {
		switch v := c.(type) {
		case *core.PipelineStepStart:
			out = append(out, "start:"+v.AgentID)
		case *core.PipelineStepEnd:
			out = append(out, "end:"+v.AgentID+"="+asJSONString(v.Output))
		}
	}
	return out
}

func asJSONString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestPipelineSteps(t *testing.T) {
	agents := []*core.Agent{echoAgent("upper", "A:"), echoAgent("lower", "b:"), echoAgent("mid", "m:")}
	pipelines := map[string][]core.PipelineStep{
		"chain": {{Type: core.StepAgent, AgentID: "upper"}, {Type: core.StepAgent, AgentID: "lower"}},
		"fan":   {{Type: core.StepParallel, Steps: []core.PipelineStep{{Type: core.StepAgent, AgentID: "upper"}, {Type: core.StepAgent, AgentID: "lower"}}}},
		"map":   {{Type: core.StepMap, AgentID: "mid"}},
	}
	tb := newTestbed(t, modeltest.New(), agents, func(c *engine.Config) { c.Pipelines = pipelines })
	tests := []struct {
		pipeline string
		input    any
		trace    []string
	}{
		{"chain", "x", []string{"start:upper", `end:upper="A:x"`, "start:lower", `end:lower="b:A:x"`}},
		{"fan", "x", []string{"start:parallel", "start:upper", "start:lower", `end:upper="A:x"`, `end:lower="b:x"`, `end:parallel=["A:x","b:x"]`}},
		{"map", []string{"1", "2"}, []string{"start:mid", `end:mid=["m:1","m:2"]`}},
		{"map", json.RawMessage(`["a"]`), []string{"start:mid", `end:mid=["m:a"]`}},
		{"map", "single", []string{"start:mid", `end:mid=["m:single"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.pipeline, func(t *testing.T) {
			cs, err := collect(tb.in.RunPipeline(context.Background(), tt.pipeline, tt.input))
			if err != nil {
				t.Fatal(err)
			}
			got := stepTrace(cs)
			if tt.pipeline == "fan" {
				// Branches interleave; compare as sets, outer frame in place.
				slices.Sort(got[1:5])
				want := slices.Clone(tt.trace)
				slices.Sort(want[1:5])
				tt.trace = want
			}
			if !slices.Equal(got, tt.trace) {
				t.Errorf("trace %q\nwant  %q", got, tt.trace)
			}
			for _, c := range cs {
				if s, ok := c.(*core.PipelineStepStart); ok && (s.PipelineID != tt.pipeline || s.RunID == "" || s.Seq == 0) {
					t.Errorf("step crumb %+v", s)
				}
			}
		})
	}
	_, err := collect(tb.in.RunPipeline(context.Background(), "ghost", "x"))
	wantCode(t, err, core.CodePipelineNotFound)
}

func TestPipelineStepsAreNotLogged(t *testing.T) {
	tb := newTestbed(t, modeltest.New(), []*core.Agent{echoAgent("a", "")}, func(c *engine.Config) {
		c.Pipelines = map[string][]core.PipelineStep{"p": {{Type: core.StepAgent, AgentID: "a"}}}
	})
	cs, err := collect(tb.in.RunPipeline(context.Background(), "p", "x"))
	if err != nil {
		t.Fatal(err)
	}
	step := cs[0].(*core.PipelineStepStart)
	if entries, _ := tb.store.GetCrumbs(context.Background(), step.RunID, 0, 0); len(entries) != 0 {
		t.Errorf("pipeline step crumbs are never logged: %d", len(entries))
	}
}

func TestParallelFailureWaitsForSiblings(t *testing.T) {
	bad, _ := scripted("bad", modeltest.Fail(errors.New("boom")))
	tb := newTestbed(t, modeltest.New(), []*core.Agent{bad, echoAgent("good", "ok:")}, func(c *engine.Config) {
		c.Pipelines = map[string][]core.PipelineStep{"p": {{Type: core.StepParallel, Steps: []core.PipelineStep{
			{Type: core.StepAgent, AgentID: "bad"}, {Type: core.StepAgent, AgentID: "good"},
		}}}}
	})
	cs, err := collect(tb.in.RunPipeline(context.Background(), "p", "x"))
	wantCode(t, err, core.CodeInternalError) // the branch failed with a plain error
	var goodEnded bool
	for _, c := range cs {
		if e, ok := c.(*core.AgentRunEnd); ok && e.AgentID == "good" {
			goodEnded = true
		}
	}
	if !goodEnded {
		t.Errorf("the sibling settles before the step fails: %v", types(cs))
	}
	if ae := cs[len(cs)-1].(*core.AgentError); ae.AgentID != "p" {
		t.Errorf("the pipeline's own failure ends the stream: %+v", ae)
	}
}

type fixedDecider struct{ choice string }

func (d fixedDecider) Decide(_ context.Context, q core.Question) (core.Decision, error) {
	return core.Decision{Choice: d.choice, Confidence: 0.9}, nil
}

func TestRouteStep(t *testing.T) {
	agents := []*core.Agent{echoAgent("billing", "$:"), echoAgent("tech", "#:")}
	mk := func(choice string) *testbed {
		return newTestbed(t, modeltest.New(), agents, func(c *engine.Config) {
			c.Decisions = map[string]core.Decider{"triage": fixedDecider{choice}}
			c.Pipelines = map[string][]core.PipelineStep{"support": {{Type: core.StepRoute, Decider: "triage", Routes: map[string]string{"billing": "billing", "tech": "tech"}}}}
		})
	}
	cs, err := collect(mk("tech").in.RunPipeline(context.Background(), "support", "my wifi"))
	if err != nil {
		t.Fatal(err)
	}
	if got := stepTrace(cs); !slices.Equal(got, []string{"start:route", `end:route="#:my wifi"`}) {
		t.Errorf("trace %q", got)
	}
	_, err = collect(mk("sales").in.RunPipeline(context.Background(), "support", "x"))
	wantCode(t, err, core.CodeDecisionInvalid)
}

func TestHITLInsidePipeline(t *testing.T) {
	approver := askAgent()
	m := modeltest.New(modeltest.ToolCall("human_approve_publish", map[string]string{}), modeltest.Text("approved draft"))
	approver.Providers = m.Registry("mock")
	tb := newTestbed(t, modeltest.New(), []*core.Agent{echoAgent("drafter", "draft:"), approver, echoAgent("sender", "sent:")}, func(c *engine.Config) {
		c.Pipelines = map[string][]core.PipelineStep{"publish": {
			{Type: core.StepAgent, AgentID: "drafter"}, {Type: core.StepAgent, AgentID: "publisher"}, {Type: core.StepAgent, AgentID: "sender"},
		}}
	})
	cs, err := collect(tb.in.RunPipeline(context.Background(), "publish", "post"))
	if err != nil {
		t.Fatal(err)
	}
	hr := suspendOn(t, cs)
	cp, _ := tb.store.GetCheckpoint(context.Background(), hr.CheckpointID)
	if cp.Parent == nil || cp.Parent.StepIndex != 1 || len(cp.Parent.RemainingSteps) != 1 || cp.Parent.RemainingSteps[0].AgentID != "sender" {
		t.Fatalf("the checkpoint carries the rest of the pipeline: %+v", cp.Parent)
	}
	cont, err := collect(tb.in.Resume(context.Background(), hr.CheckpointID, okAnswer))
	if err != nil {
		t.Fatal(err)
	}
	if got := stepTrace(cont); !slices.Equal(got, []string{`end:publisher="approved draft"`, "start:sender", `end:sender="sent:approved draft"`}) {
		t.Errorf("continuation %q", got)
	}
	if cont[0].CrumbType() != core.TypeHumanResumed {
		t.Errorf("the continuation starts with human:resumed: %v", types(cont))
	}
}

func TestHITLInsideParallel(t *testing.T) {
	mkAsk := func(id string, answer string) *core.Agent {
		a := askAgent()
		a.ID = id
		m := modeltest.New(modeltest.ToolCall("human_approve_publish", map[string]string{}), modeltest.Text(answer))
		a.Providers = m.Registry("mock")
		return a
	}
	tb := newTestbed(t, modeltest.New(), []*core.Agent{mkAsk("left", "L"), mkAsk("right", "R"), echoAgent("plain", "p:"), echoAgent("merge", "")}, func(c *engine.Config) {
		c.Pipelines = map[string][]core.PipelineStep{"p": {
			{Type: core.StepParallel, Steps: []core.PipelineStep{{Type: core.StepAgent, AgentID: "left"}, {Type: core.StepAgent, AgentID: "plain"}, {Type: core.StepAgent, AgentID: "right"}}},
			{Type: core.StepAgent, AgentID: "merge"},
		}}
	})
	cs, err := collect(tb.in.RunPipeline(context.Background(), "p", "x"))
	if err != nil {
		t.Fatal(err)
	}
	var held []*core.HumanRequired
	var plainEndAt, firstHRAt int
	for i, c := range cs {
		if hr, ok := c.(*core.HumanRequired); ok {
			held = append(held, hr)
			if firstHRAt == 0 {
				firstHRAt = i
			}
		}
		if e, ok := c.(*core.AgentRunEnd); ok && e.AgentID == "plain" {
			plainEndAt = i
		}
	}
	if len(held) != 2 || firstHRAt < plainEndAt {
		t.Fatalf("both suspensions surface after the sibling settles: %v", types(cs))
	}
	byAgent := map[string]string{held[0].AgentID: held[0].CheckpointID, held[1].AgentID: held[1].CheckpointID}

	first, err := collect(tb.in.Resume(context.Background(), byAgent["left"], okAnswer))
	if err != nil {
		t.Fatal(err)
	}
	// The resumed branch closes its own frame; the parallel step stays open
	// while a sibling is pending.
	if got := stepTrace(first); !slices.Equal(got, []string{`end:left="L"`}) {
		t.Errorf("the step stays suspended while a branch is pending: %q", got)
	}
	second, err := collect(tb.in.Resume(context.Background(), byAgent["right"], okAnswer))
	if err != nil {
		t.Fatal(err)
	}
	got := stepTrace(second)
	want := []string{`end:right="R"`, `end:parallel=["L","p:x","R"]`, "start:merge", `end:merge="[\"L\",\"p:x\",\"R\"]"`}
	if !slices.Equal(got, want) {
		t.Errorf("the last branch carries the merged output on:\n got %q\nwant %q", got, want)
	}
}

func TestHITLInsideMap(t *testing.T) {
	a := askAgent()
	m := modeltest.New(modeltest.Text("one"), modeltest.ToolCall("human_approve_publish", map[string]string{}), modeltest.Text("two"), modeltest.Text("three"))
	a.Providers = m.Registry("mock")
	tb := newTestbed(t, modeltest.New(), []*core.Agent{a}, func(c *engine.Config) {
		c.Pipelines = map[string][]core.PipelineStep{"m": {{Type: core.StepMap, AgentID: "publisher"}}}
	})
	cs, err := collect(tb.in.RunPipeline(context.Background(), "m", []string{"a", "b", "c"}))
	if err != nil {
		t.Fatal(err)
	}
	hr := suspendOn(t, cs)
	cont, err := collect(tb.in.Resume(context.Background(), hr.CheckpointID, okAnswer))
	if err != nil {
		t.Fatal(err)
	}
	if got := stepTrace(cont); !slices.Equal(got, []string{`end:publisher=["one","two","three"]`}) {
		t.Errorf("the map finishes its remaining items: %q", got)
	}
}

// TestBreakingOutOfAParallelStepCancelsItsBranches: a consumer that stops
// reading mid-step gets its range back at once, not when the caller's
// context ends (here it never does), and every branch is cancelled.
func TestBreakingOutOfAParallelStepCancelsItsBranches(t *testing.T) {
	left, right := make(chan struct{}), make(chan struct{})
	l, lm := scripted("left", modeltest.Block(left, "l"))
	r, rm := scripted("right", modeltest.Block(right, "r"))
	tb := newTestbed(t, modeltest.New(), []*core.Agent{l, r}, func(c *engine.Config) {
		c.Pipelines = map[string][]core.PipelineStep{"p": {{Type: core.StepParallel, Steps: []core.PipelineStep{
			{Type: core.StepAgent, AgentID: "left"}, {Type: core.StepAgent, AgentID: "right"},
		}}}}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range tb.in.RunPipeline(context.Background(), "p", "x") {
			if _, ok := c.(*core.TextDelta); ok {
				<-left
				<-right
				return // both branches are inside their model calls
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("breaking out of the range did not return: the branches were not cancelled")
	}
	for _, m := range []*modeltest.Model{lm, rm} {
		if n := len(m.Requests()); n != 1 {
			t.Errorf("%d model calls, want 1", n)
		}
	}
}
