package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

func delegate(id, agent string, input any) modeltest.Call {
	return modeltest.Call{ID: id, Name: "core_delegate", Args: map[string]any{"agentId": agent, "input": input}}
}

func supervisorAgent(cfg core.SupervisorConfig, turns ...modeltest.Turn) (*core.Agent, *modeltest.Model) {
	a, m := scripted("boss", turns...)
	a.Supervisor = &cfg
	return a, m
}

func TestDelegationAndVisibility(t *testing.T) {
	tests := []struct {
		vis  core.Visibility
		want []string // crumb types of the worker surfacing in the stream
	}{
		{core.Passthrough, []string{core.TypeAgentRunStart, core.TypeTextDelta, core.TypeAgentRunEnd}},
		{core.Mediate, []string{core.TypeSubagentRunStart, core.TypeSubagentRunEnd}},
		{core.Hidden, nil},
	}
	for _, tt := range tests {
		t.Run(string(tt.vis), func(t *testing.T) {
			boss, bossModel := supervisorAgent(core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "worker", Visibility: tt.vis}}},
				modeltest.ToolCalls(delegate("d1", "worker", "task")), modeltest.Text("composed"))
			tb := newTestbed(t, modeltest.New(), []*core.Agent{boss, echoAgent("worker", "done:")})
			cs, err := tb.run(t, "boss", "go", core.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var worker []string
			for _, c := range cs {
				if c.Base().AgentID == "worker" {
					worker = append(worker, c.CrumbType())
				}
			}
			if !slices.Equal(worker, tt.want) {
				t.Errorf("worker crumbs %v, want %v", worker, tt.want)
			}
			if r := last[*core.ToolResult](t, cs); r.ToolName != "core_delegate" || r.Result != "done:task" {
				t.Errorf("the output is the tool result whatever the visibility: %+v", r)
			}
			if sys := bossModel.Requests()[0].System; !strings.Contains(sys, "## Delegation") || !strings.Contains(sys, "worker") {
				t.Errorf("roster in the prompt: %q", sys)
			}
			if tt.vis == core.Mediate {
				end := last[*core.SubagentRunEnd](t, cs)
				if end.ParentAgentID != "boss" || end.SubagentID != "worker" || end.Output != "done:task" {
					t.Errorf("subagent:run:end %+v", end)
				}
			}
		})
	}
}

func TestDelegationErrors(t *testing.T) {
	blocker := func() *core.Agent {
		a, _ := scripted("slow", modeltest.Slow(modeltest.Text("z"), 0))
		return a
	}
	tests := []struct {
		name  string
		cfg   core.SupervisorConfig
		calls []modeltest.Call
		codes []string
	}{
		{"not in the roster", core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "slow"}}}, []modeltest.Call{delegate("d1", "stranger", "x")}, []string{core.CodeDelegateNotConfigured}},
		{"over the top-level cap", core.SupervisorConfig{Max: 1, Agents: []core.SubAgent{{AgentID: "gate"}}}, []modeltest.Call{delegate("d1", "gate", "x"), delegate("d2", "gate", "y")}, []string{core.CodeDelegationLimit}},
		{"over the per-agent cap", core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "gate", Max: 1}}}, []modeltest.Call{delegate("d1", "gate", "x"), delegate("d2", "gate", "y")}, []string{core.CodeDelegationLimit}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// gate blocks its first run until the second delegation was
			// refused, so the two calls really overlap.
			release := make(chan struct{})
			gate, _ := scripted("gate", modeltest.Block(nil))
			gate.Providers = core.ProviderRegistry{"own": func(string) (core.LanguageModel, error) { return gateModel{release}, nil }}
			boss, _ := supervisorAgent(tt.cfg, modeltest.ToolCalls(tt.calls...), modeltest.Text("ok"))
			tb := newTestbed(t, modeltest.New(), []*core.Agent{boss, blocker(), gate})
			tb.in.On(func(_ context.Context, c core.Crumb) {
				if te, ok := c.(*core.ToolError); ok && te.Error.Code == core.CodeDelegationLimit {
					close(release)
				}
			})
			if len(tt.calls) == 1 {
				close(release)
			}
			cs, err := tb.run(t, "boss", "go", core.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var codes []string
			for _, te := range find[*core.ToolError](cs) {
				codes = append(codes, te.Error.Code)
			}
			if !slices.Equal(codes, tt.codes) {
				t.Errorf("tool errors %v, want %v", codes, tt.codes)
			}
		})
	}
}

// gateModel answers once release is closed.
type gateModel struct{ release chan struct{} }

func (g gateModel) Stream(ctx context.Context, _ core.ModelRequest) iterSeq2 {
	return func(yield func(core.ModelEvent, error) bool) {
		select {
		case <-g.release:
		case <-ctx.Done():
			yield(core.ModelEvent{}, ctx.Err())
			return
		}
		if yield(core.ModelEvent{Type: core.EventTextDelta, Delta: "gated"}, nil) {
			yield(modeltest.Finish(core.FinishStop), nil)
		}
	}
}

func TestChainSuspensionAndCascadingResume(t *testing.T) {
	worker := askAgent()
	worker.ID = "worker"
	wm := modeltest.New(modeltest.ToolCall("human_approve_publish", map[string]string{}), modeltest.Text("worker done"))
	worker.Providers = wm.Registry("mock")
	boss, bossModel := supervisorAgent(core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "worker", Visibility: core.Hidden}}},
		modeltest.ToolCalls(delegate("d1", "worker", "publish")), modeltest.Text("boss done"))
	tb := newTestbed(t, modeltest.New(), []*core.Agent{boss, worker})

	cs, err := tb.run(t, "boss", "go", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hr := suspendOn(t, cs)
	if hr.AgentID != "worker" {
		t.Fatalf("human:required surfaces even when hidden: %+v", hr)
	}
	if len(find[*core.ToolError](cs)) != 0 {
		t.Errorf("a suspension is not a tool error: %v", types(cs))
	}
	child, _ := tb.store.GetCheckpoint(context.Background(), hr.CheckpointID)
	if child.Parent == nil || child.Parent.Kind != core.ParentSupervisor {
		t.Fatalf("the child links to the supervisor: %+v", child.Parent)
	}
	sup, err := tb.store.GetCheckpoint(context.Background(), child.Parent.CheckpointID)
	if err != nil || len(sup.Pending) != 1 || sup.Pending[0].ChildCheckpointID != hr.CheckpointID {
		t.Fatalf("the supervisor checkpoint lists its child: %+v %v", sup, err)
	}
	_, err = collect(tb.in.Resume(context.Background(), sup.ID, "x"))
	wantCode(t, err, core.CodeSupervisorNotResumable)
	if !strings.Contains(err.Error(), hr.CheckpointID) {
		t.Errorf("the error names the child checkpoint: %v", err)
	}

	cont, err := collect(tb.in.Resume(context.Background(), hr.CheckpointID, okAnswer))
	if err != nil {
		t.Fatal(err)
	}
	end := last[*core.AgentRunEnd](t, cont)
	if end.AgentID != "boss" || end.Output != "boss done" {
		t.Errorf("the supervisor continues to its end: %v", types(cont))
	}
	msgs := bossModel.Requests()[1].Messages
	if p := msgs[len(msgs)-1].Parts[0]; p.ToolCallID != "d1" || string(p.Output) != `"worker done"` {
		t.Errorf("the child's output answers the delegate call: %+v", p)
	}
	if _, err := tb.store.GetCheckpoint(context.Background(), sup.ID); !errors.Is(err, core.ErrCheckpointNotFound) {
		t.Errorf("the supervisor checkpoint is consumed: %v", err)
	}
}

func TestTwoSuspendedDelegationsResumeInSequence(t *testing.T) {
	mk := func(id, answer string) *core.Agent {
		a := askAgent()
		a.ID = id
		a.Providers = modeltest.New(modeltest.ToolCall("human_approve_publish", map[string]string{}), modeltest.Text(answer)).Registry("mock")
		return a
	}
	boss, bossModel := supervisorAgent(core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "a"}, {AgentID: "b"}}},
		modeltest.ToolCalls(delegate("da", "a", "1"), delegate("db", "b", "2")), modeltest.Text("both done"))
	tb := newTestbed(t, modeltest.New(), []*core.Agent{boss, mk("a", "A"), mk("b", "B")})
	cs, err := tb.run(t, "boss", "go", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hrs := find[*core.HumanRequired](cs)
	if len(hrs) != 2 {
		t.Fatalf("two suspensions: %v", types(cs))
	}
	first, err := collect(tb.in.Resume(context.Background(), hrs[0].CheckpointID, okAnswer))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range first {
		if c.Base().AgentID == "boss" {
			t.Fatalf("the supervisor waits for its other delegation: %v", types(first))
		}
	}
	second, err := collect(tb.in.Resume(context.Background(), hrs[1].CheckpointID, okAnswer))
	if err != nil {
		t.Fatal(err)
	}
	if end := last[*core.AgentRunEnd](t, second); end.AgentID != "boss" || end.Output != "both done" {
		t.Errorf("the last resume continues the supervisor: %v", types(second))
	}
	if bossModel.Calls() != 2 {
		t.Errorf("supervisor model calls %d", bossModel.Calls())
	}
}

func TestSupervisorInPipelineCascades(t *testing.T) {
	worker := askAgent()
	worker.ID = "worker"
	worker.Providers = modeltest.New(modeltest.ToolCall("human_approve_publish", map[string]string{}), modeltest.Text("w")).Registry("mock")
	boss, _ := supervisorAgent(core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "worker"}}},
		modeltest.ToolCalls(delegate("d1", "worker", "x")), modeltest.Text("boss:w"))
	tb := newTestbed(t, modeltest.New(), []*core.Agent{boss, worker, echoAgent("after", "after:")}, func(c *engine.Config) {
		c.Pipelines = map[string][]core.PipelineStep{"p": {{Type: core.StepAgent, AgentID: "boss"}, {Type: core.StepAgent, AgentID: "after"}}}
	})
	cs, err := collect(tb.in.RunPipeline(context.Background(), "p", "go"))
	if err != nil {
		t.Fatal(err)
	}
	hr := suspendOn(t, cs)
	cont, err := collect(tb.in.Resume(context.Background(), hr.CheckpointID, okAnswer))
	if err != nil {
		t.Fatal(err)
	}
	if got := stepTrace(cont); !slices.Equal(got, []string{`end:boss="boss:w"`, "start:after", `end:after="after:boss:w"`}) {
		t.Errorf("worker → supervisor → pipeline: %q", got)
	}
}

func TestDelegationChain(t *testing.T) {
	leaf := askAgent()
	leaf.ID = "leaf"
	leaf.Providers = modeltest.New(modeltest.ToolCall("human_approve_publish", map[string]string{}), modeltest.Text("leaf")).Registry("mock")
	mid, _ := scripted("mid", modeltest.ToolCalls(delegate("m1", "leaf", "x")), modeltest.Text("mid:leaf"))
	mid.Supervisor = &core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "leaf"}}}
	top, _ := supervisorAgent(core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "mid"}}},
		modeltest.ToolCalls(delegate("t1", "mid", "x")), modeltest.Text("top:mid:leaf"))
	tb := newTestbed(t, modeltest.New(), []*core.Agent{top, mid, leaf})
	cs, err := tb.run(t, "boss", "go", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hr := suspendOn(t, cs)
	if hr.AgentID != "leaf" {
		t.Fatalf("the leaf's suspension surfaces: %+v", hr)
	}
	cont, err := collect(tb.in.Resume(context.Background(), hr.CheckpointID, okAnswer))
	if err != nil {
		t.Fatal(err)
	}
	var ends []string
	for _, e := range find[*core.AgentRunEnd](cont) {
		ends = append(ends, e.AgentID+"="+asJSONString(e.Output))
	}
	if !slices.Equal(ends, []string{`leaf="leaf"`, `mid="mid:leaf"`, `boss="top:mid:leaf"`}) {
		t.Errorf("the resume cascades up the chain: %v", ends)
	}
}
