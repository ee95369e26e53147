package otel_test

import (
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

func TestLoopIterationsAreSpans(t *testing.T) {
	host := agent("host")
	host.Loop = &core.LoopConfig{Pool: []string{"drafter"}, MaxIterations: 3}
	model := modeltest.New(
		modeltest.ToolCall("core_start_loop", map[string]any{"pipeline": []string{"drafter"}, "input": "x"}),
		modeltest.Text("draft 1"),
		modeltest.ToolCall("core_iterate_loop", map[string]any{"feedback": "shorter"}),
		modeltest.Text("draft 2"),
		modeltest.ToolCall("core_finish_loop", map[string]any{}),
		modeltest.Text("final"),
	)
	r := newRig(t, engine.Config{Providers: model.Registry("scripted"), Agents: []*core.Agent{host, agent("drafter")}})
	if _, err := r.in.RunSync(t.Context(), "host", "go", core.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	// The iteration's pipeline steps run inside the loop tool's call, whose
	// crumbs reach the listener after the steps started: they are children
	// of the run, beside the loop's spans.
	want := `agent.run
  chat m1
  chat m1
  chat m1
  chat m1
  loop.run
    loop.iteration.1
    loop.iteration.2
  pipeline.step.0
    agent.run
      chat m1
  pipeline.step.0
    agent.run
      chat m1
  tool.call.core_finish_loop
  tool.call.core_iterate_loop
  tool.call.core_start_loop
`
	if got := tree(r.ended()); got != want {
		t.Fatalf("span tree:\n%s\nwant:\n%s", got, want)
	}
	loop := find(r.ended(), "loop.run")
	if attr(loop, "bread.status") != "completed" || attr(loop, "bread.iterations") != int64(2) || attr(loop, "bread.max_iterations") != int64(3) {
		t.Errorf("loop attributes %v", loop.Attributes())
	}
	if it := find(r.ended(), "loop.iteration.2"); attr(it, "bread.iteration") != int64(2) {
		t.Errorf("iteration attributes %v", it.Attributes())
	}
}

// TestAHiddenDelegationStillEnds: with visibility hidden no crumb of the
// delegated run reaches the listener; its span ends with its supervisor's.
func TestAHiddenDelegationStillEnds(t *testing.T) {
	boss := agent("boss")
	boss.Supervisor = &core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "helper", Visibility: core.Hidden}}}
	model := modeltest.New(
		modeltest.ToolCall("core_delegate", map[string]any{"agentId": "helper", "input": "dough"}),
		modeltest.Text("risen"),
		modeltest.Text("bread"),
	)
	r := newRig(t, engine.Config{Providers: model.Registry("scripted"), Agents: []*core.Agent{boss, agent("helper")}})
	if _, err := r.in.RunSync(t.Context(), "boss", "go", core.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "agent.run\n  chat m1\n  chat m1\n  subagent.run\n    agent.run\n      chat m1\n  tool.call.core_delegate\n"
	if got := tree(r.ended()); got != want {
		t.Fatalf("span tree:\n%s\nwant:\n%s", got, want)
	}
	if n := len(r.spans.Started()) - len(r.ended()); n != 0 {
		t.Errorf("%d spans never ended", n)
	}
}
