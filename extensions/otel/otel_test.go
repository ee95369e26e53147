package otel_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/typed"
)

type lookupArgs struct {
	Q string `json:"q"`
}

func lookupTool(fail bool) core.Tool {
	return typed.DefineTool("lookup", "Looks things up.", func(ctx context.Context, a lookupArgs, _ core.ToolContext) (string, error) {
		if fail {
			return "", errors.New("the index is down")
		}
		return "found " + a.Q, nil
	})
}

func agent(id string, tools ...core.Tool) *core.Agent {
	return &core.Agent{ID: id, Model: core.ModelRef{Provider: "scripted", Model: "m1"}, Tools: tools}
}

func TestARunWithAToolIsOneSpanTree(t *testing.T) {
	model := modeltest.New(modeltest.ToolCall("tool_lookup", lookupArgs{Q: "rye"}), modeltest.Text("Rye ", "is bread."))
	r := newRig(t, engine.Config{Providers: model.Registry("scripted"), Agents: []*core.Agent{agent("writer", lookupTool(false))}})
	res, err := r.in.RunSync(t.Context(), "writer", "tell me", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spans := r.ended()
	want := "agent.run\n  chat m1\n  chat m1\n  tool.call.tool_lookup\n"
	if got := tree(spans); got != want {
		t.Fatalf("span tree:\n%s\nwant:\n%s", got, want)
	}
	run := find(spans, "agent.run")
	for k, v := range map[string]any{
		"bread.agent_id": "writer", "bread.run_id": res.RunID, "bread.session_id": res.SessionID,
		"bread.status": "completed", "gen_ai.operation.name": "invoke_agent",
	} {
		if got := attr(run, k); got != v {
			t.Errorf("run %s = %v, want %v", k, got, v)
		}
	}
	chat := find(spans, "chat m1")
	for k, v := range map[string]any{
		"gen_ai.system": "scripted", "gen_ai.request.model": "m1", "gen_ai.operation.name": "chat",
		"gen_ai.usage.input_tokens": int64(1), "gen_ai.usage.output_tokens": int64(1),
	} {
		if got := attr(chat, k); got != v {
			t.Errorf("chat %s = %v, want %v", k, got, v)
		}
	}
	if chat.SpanKind() != trace.SpanKindClient {
		t.Errorf("chat span kind %v", chat.SpanKind())
	}
	reasons := []string{}
	for _, s := range spans {
		if s.Name() == "chat m1" {
			reasons = append(reasons, attr(s, "gen_ai.response.finish_reasons").([]string)[0])
		}
	}
	if len(reasons) != 2 || reasons[0] == reasons[1] {
		t.Errorf("finish reasons %v, want tool-calls and stop", reasons)
	}
	tool := find(spans, "tool.call.tool_lookup")
	if attr(tool, "gen_ai.tool.name") != "tool_lookup" || attr(tool, "bread.tool_call_id") != "call-tool_lookup" || attr(tool, "bread.duration_ms") == nil {
		t.Errorf("tool attributes %v", tool.Attributes())
	}
	for _, s := range spans {
		if s.SpanContext().TraceID() != run.SpanContext().TraceID() {
			t.Errorf("span %s is in another trace", s.Name())
		}
	}
}

func TestAFailingToolAndRunRecordTheirErrors(t *testing.T) {
	model := modeltest.New(modeltest.ToolCall("tool_lookup", lookupArgs{Q: "x"}), modeltest.Fail(errors.New("provider down")))
	r := newRig(t, engine.Config{Providers: model.Registry("scripted"), Agents: []*core.Agent{agent("writer", lookupTool(true))}})
	_, err := r.in.RunSync(t.Context(), "writer", "go", core.RunOptions{})
	if err == nil {
		t.Fatal("the run succeeded")
	}
	spans := r.ended()
	tool := find(spans, "tool.call.tool_lookup")
	if tool.Status().Code.String() != "Error" || attr(tool, "bread.error_code") != core.CodeToolError {
		t.Errorf("tool span status %v attrs %v", tool.Status(), tool.Attributes())
	}
	run := find(spans, "agent.run")
	if attr(run, "bread.status") != "failed" || attr(run, "bread.error_code") == nil || run.Status().Code.String() != "Error" {
		t.Errorf("run span %v %v", run.Status(), run.Attributes())
	}
	var failedChat bool
	for _, s := range spans {
		if s.Name() == "chat m1" && attr(s, "error.type") != nil {
			failedChat = true
		}
	}
	if !failedChat {
		t.Error("no chat span carries error.type")
	}
}

func TestPipelineStepsDelegationsAndTasksNest(t *testing.T) {
	summarize := &core.Task{Name: "summarize", Model: core.ModelRef{Provider: "scripted", Model: "m1"}, Instructions: "Summarize."}
	boss := agent("boss")
	boss.Supervisor = &core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "helper"}}}
	tail := agent("tail")
	tail.Tasks = []string{"summarize"}
	model := modeltest.New(
		modeltest.ToolCall("core_delegate", map[string]any{"agentId": "helper", "input": "dough"}), // boss
		modeltest.Text("risen dough"), // helper
		modeltest.Text("bread"),       // boss
		modeltest.ToolCall("task_summarize", map[string]any{"text": "bread"}), // tail
		modeltest.JSON("short"), // the task
		modeltest.Text("done"),  // tail
	)
	r := newRig(t, engine.Config{
		Providers: model.Registry("scripted"), Tasks: []*core.Task{summarize},
		Agents:    []*core.Agent{boss, agent("helper"), tail},
		Pipelines: map[string][]core.PipelineStep{"bake": {{AgentID: "boss"}, {AgentID: "tail"}}},
	})
	drain(t, r.in.RunPipeline(t.Context(), "bake", "flour"))
	want := `pipeline.step.0
  agent.run
    chat m1
    chat m1
    subagent.run
      agent.run
        chat m1
    tool.call.core_delegate
pipeline.step.1
  agent.run
    chat m1
    chat m1
    chat m1
    task.summarize
    tool.call.task_summarize
`
	if got := tree(r.ended()); got != want {
		t.Fatalf("span tree:\n%s\nwant:\n%s", got, want)
	}
	step := find(r.ended(), "pipeline.step.1")
	if attr(step, "bread.pipeline_id") != "bake" || attr(step, "bread.step_index") != int64(1) || attr(step, "bread.agent_id") != "tail" {
		t.Errorf("step attributes %v", step.Attributes())
	}
	sub := find(r.ended(), "subagent.run")
	if attr(sub, "bread.parent_agent_id") != "boss" || attr(sub, "bread.subagent_id") != "helper" || attr(sub, "bread.status") != "completed" {
		t.Errorf("delegation attributes %v", sub.Attributes())
	}
	task := find(r.ended(), "task.summarize")
	if attr(task, "bread.status") != "completed" || attr(task, "gen_ai.request.model") != "m1" {
		t.Errorf("task attributes %v", task.Attributes())
	}
}

func TestAResumedRunLinksToTheRunThatSuspended(t *testing.T) {
	approver := agent("approver")
	approver.HumanTools = []core.HumanToolDef{core.HumanTool("ok", json.RawMessage(`{"type":"object"}`))}
	model := modeltest.New(modeltest.ToolCall("human_ok", map[string]any{}), modeltest.Text("approved"))
	r := newRig(t, engine.Config{Providers: model.Registry("scripted"), Agents: []*core.Agent{approver}})
	var checkpoint string
	for _, c := range drain(t, r.in.Run(t.Context(), "approver", "publish?", core.RunOptions{})) {
		if h, ok := c.(*core.HumanRequired); ok {
			checkpoint = h.CheckpointID
		}
	}
	if checkpoint == "" {
		t.Fatal("the run did not suspend")
	}
	first := find(r.ended(), "agent.run")
	if first == nil || attr(first, "bread.status") != "suspended" || len(first.Events()) == 0 || first.Events()[0].Name != "human.required" {
		t.Fatalf("the suspended run's span: %v", first)
	}
	drain(t, r.in.Resume(t.Context(), checkpoint, map[string]any{"yes": true}))
	var second = r.ended()[len(r.ended())-1]
	for _, s := range r.ended() {
		if s.Name() == "agent.run" && s != first {
			second = s
		}
	}
	if attr(second, "bread.run_id") != attr(first, "bread.run_id") || attr(second, "bread.resumed") != true || attr(second, "bread.status") != "completed" {
		t.Errorf("the resumed run's span attributes %v", second.Attributes())
	}
	if links := second.Links(); len(links) != 1 || links[0].SpanContext.SpanID() != first.SpanContext().SpanID() {
		t.Errorf("the resumed run's links %v, want the suspended run's span", links)
	}
}

func TestMetrics(t *testing.T) {
	model := modeltest.New(modeltest.ToolCall("tool_lookup", lookupArgs{Q: "a"}), modeltest.Text("ok"))
	r := newRig(t, engine.Config{Providers: model.Registry("scripted"), Agents: []*core.Agent{agent("writer", lookupTool(false))}})
	if _, err := r.in.RunSync(t.Context(), "writer", "go", core.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	ms := r.metrics(t)
	sum := func(name string) int64 {
		m, ok := ms[name]
		if !ok {
			t.Fatalf("no metric %s; have %v", name, keys(ms))
		}
		var n int64
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			for _, p := range d.DataPoints {
				n += p.Value
			}
		case metricdata.Histogram[float64]:
			for _, p := range d.DataPoints {
				n += int64(p.Count)
			}
		case metricdata.Histogram[int64]:
			for _, p := range d.DataPoints {
				n += int64(p.Count)
			}
		}
		return n
	}
	for name, want := range map[string]int64{
		"bread.runs.started": 1, "bread.runs.ended": 1, "bread.run.duration": 1,
		"gen_ai.client.operation.duration": 2, "gen_ai.client.token.usage": 4, "bread.tool.duration": 1,
	} {
		if got := sum(name); got != want {
			t.Errorf("%s: %d data, want %d", name, got, want)
		}
	}
	if sum("bread.crumblog.append.duration") == 0 {
		t.Error("no crumb log append was measured")
	}
	ended := ms["bread.runs.ended"].Data.(metricdata.Sum[int64]).DataPoints[0]
	if v, _ := ended.Attributes.Value("bread.status"); v.AsString() != "completed" {
		t.Errorf("runs.ended attributes %v", ended.Attributes)
	}
}

func TestNoGlobalProviderUnlessAsked(t *testing.T) {
	before := otel.GetTracerProvider()
	newRig(t, engine.Config{Providers: modeltest.New().Registry("scripted"), Agents: []*core.Agent{agent("a")}})
	if otel.GetTracerProvider() != before {
		t.Fatal("the plugin replaced the global tracer provider without SetGlobal")
	}
}

func keys[M ~map[string]V, V any](m M) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// nonClosingStore lets two rigs (two processes, each with its own tracer
// provider) share one store.
type nonClosingStore struct{ *memory.Store }

func (nonClosingStore) Close() error { return nil }

// TestAResumedRunLinksAcrossProcesses: the suspension's trace context
// travels on the checkpoint, so a run resumed by another process (another
// plugin instance, another tracer provider) links to the span that
// suspended.
func TestAResumedRunLinksAcrossProcesses(t *testing.T) {
	store := nonClosingStore{memory.New()}
	approver := agent("approver")
	approver.HumanTools = []core.HumanToolDef{core.HumanTool("ok", json.RawMessage(`{"type":"object"}`))}
	a := newRig(t, engine.Config{Store: store, Providers: modeltest.New(modeltest.ToolCall("human_ok", map[string]any{})).Registry("scripted"), Agents: []*core.Agent{approver}})
	var checkpoint string
	for _, c := range drain(t, a.in.Run(t.Context(), "approver", "publish?", core.RunOptions{})) {
		if h, ok := c.(*core.HumanRequired); ok {
			checkpoint = h.CheckpointID
		}
	}
	first := find(a.ended(), "agent.run")
	if checkpoint == "" || first == nil {
		t.Fatal("the run did not suspend")
	}
	b := newRig(t, engine.Config{Store: store, Providers: modeltest.New(modeltest.Text("approved")).Registry("scripted"), Agents: []*core.Agent{approver}})
	drain(t, b.in.Resume(t.Context(), checkpoint, map[string]any{"yes": true}))
	second := find(b.ended(), "agent.run")
	if second == nil || attr(second, "bread.resumed") != true {
		t.Fatalf("the resumed run's span: %v", second)
	}
	if links := second.Links(); len(links) != 1 || links[0].SpanContext.SpanID() != first.SpanContext().SpanID() || links[0].SpanContext.TraceID() != first.SpanContext().TraceID() {
		t.Errorf("the resumed run's links %v, want the span that suspended in the other process", links)
	}
}
