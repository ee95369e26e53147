package engine_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// TestClientContextReachesPromptAndTools: the client's context is a section
// of the system prompt, and a tool reads the whole ClientInput (with the
// forwarded properties the model never sees) from its context.
func TestClientContextReachesPromptAndTools(t *testing.T) {
	var seen core.ClientInput
	probe := core.Tool{Name: "probe", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(ctx context.Context, _ json.RawMessage, _ core.ToolContext) (any, error) {
			seen = core.ClientInputFrom(ctx)
			return "ok", nil
		}}
	agent := textAgent("a")
	agent.Tools = []core.Tool{probe}
	model := modeltest.New(modeltest.ToolCall("tool_probe", map[string]any{}), modeltest.Text("done"))
	tb := newTestbed(t, model, []*core.Agent{agent})
	client := core.ClientInput{
		Context:        []core.ContextEntry{{Description: "page", Value: "/cart"}},
		ForwardedProps: json.RawMessage(`{"locale":"it"}`),
	}
	cs, err := tb.run(t, "a", "hi", core.RunOptions{Client: client})
	if err != nil {
		t.Fatalf("run: %v (%v)", err, types(cs))
	}
	system := model.Requests()[0].System
	if !strings.Contains(system, "Context from the user's application:\n- page: /cart") {
		t.Errorf("system prompt %q lacks the client's context", system)
	}
	if strings.Contains(system, "locale") {
		t.Errorf("system prompt %q shows the forwarded properties", system)
	}
	if string(seen.ForwardedProps) != `{"locale":"it"}` || len(seen.Context) != 1 {
		t.Errorf("the tool saw %+v, want the client's input", seen)
	}
	for _, spec := range model.Requests()[0].Tools {
		if spec.Name == engine.StateToolName {
			t.Errorf("a run given no state offers %s", engine.StateToolName)
		}
	}
}

// TestClientToolSuspendsAndResumesWithItsResult: a client tool is offered
// under its own name; its call suspends the run on a checkpoint, and
// ResumeWith answers it with the tool's result, which the model reads on
// its next call, the client's tools offered again.
func TestClientToolSuspendsAndResumesWithItsResult(t *testing.T) {
	model := modeltest.New(
		modeltest.ToolCall("pick_color", map[string]any{"hint": "warm"}),
		modeltest.Text("you picked red"),
	)
	tb := newTestbed(t, model, []*core.Agent{textAgent("a")})
	client := core.ClientInput{Tools: []core.ClientTool{{Name: "pick_color", Description: "Ask the page for a color",
		Parameters: json.RawMessage(`{"type":"object","properties":{"hint":{"type":"string"}}}`)}}}
	cs, err := tb.run(t, "a", "pick", core.RunOptions{Session: core.SessionOptions{ID: "s1"}, Client: client})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var spec *core.ToolSpec
	for i, s := range model.Requests()[0].Tools {
		if s.Name == "pick_color" {
			spec = &model.Requests()[0].Tools[i]
		}
	}
	if spec == nil || spec.Description != "Ask the page for a color" {
		t.Fatalf("the model was offered %+v, want pick_color", model.Requests()[0].Tools)
	}
	h := last[*core.HumanRequired](t, cs)
	if h.ToolName != "pick_color" || h.Kind != core.HumanInput {
		t.Fatalf("human:required %+v, want pick_color awaiting input", h)
	}
	cs, err = collect(tb.in.ResumeWith(context.Background(), h.CheckpointID, "red", client))
	if err != nil {
		t.Fatalf("resume: %v (%v)", err, types(cs))
	}
	end := last[*core.AgentRunEnd](t, cs)
	if end.Output != "you picked red" {
		t.Errorf("output %v", end.Output)
	}
	req := model.Requests()[1]
	if !slices.ContainsFunc(req.Tools, func(s core.ToolSpec) bool { return s.Name == "pick_color" }) {
		t.Errorf("the continuation did not offer the client's tool again: %+v", req.Tools)
	}
	lastMsg := req.Messages[len(req.Messages)-1]
	if lastMsg.Role != core.RoleTool || len(lastMsg.Parts) != 1 || string(lastMsg.Parts[0].Output) != `"red"` {
		t.Errorf("the model's last message %+v, want the tool result \"red\"", lastMsg)
	}
}

// TestClientToolNamesAreChecked: a name no provider accepts is refused
// before the run starts anything.
func TestClientToolNamesAreChecked(t *testing.T) {
	tb := newTestbed(t, modeltest.New(modeltest.Text("x")), []*core.Agent{textAgent("a")})
	for _, ci := range []core.ClientInput{
		{Tools: []core.ClientTool{{Name: "has space"}}},
		{Tools: []core.ClientTool{{Name: "x"}, {Name: "x"}}},
		{Tools: []core.ClientTool{{Name: "x", Parameters: json.RawMessage(`[]`)}}},
		{State: json.RawMessage(`{`)},
	} {
		_, err := tb.run(t, "a", "hi", core.RunOptions{Client: ci})
		wantCode(t, err, core.CodeValidationError)
	}
	if tb.model.Calls() != 0 {
		t.Errorf("the model was called %d times", tb.model.Calls())
	}
}

// TestStateUpdate: a run given a state stores it with the session, shows it
// in the system prompt, and offers core_state_update, whose patches are
// applied in order, stored, and told as tool:result:partial deltas; a patch
// that does not apply is the tool's error and changes nothing.
func TestStateUpdate(t *testing.T) {
	model := modeltest.New(
		modeltest.ToolCalls(
			modeltest.Call{ID: "p1", Name: engine.StateToolName, Args: map[string]any{"patch": []any{map[string]any{"op": "add", "path": "/todos/-", "value": "milk"}}}},
			modeltest.Call{ID: "p2", Name: engine.StateToolName, Args: map[string]any{"patch": []any{map[string]any{"op": "replace", "path": "/missing/x", "value": 1}}}},
		),
		modeltest.ToolCall(engine.StateToolName, map[string]any{"patch": []any{map[string]any{"op": "replace", "path": "/title", "value": "groceries"}}}),
		modeltest.Text("done"),
	)
	tb := newTestbed(t, model, []*core.Agent{textAgent("a")})
	cs, err := tb.run(t, "a", "add milk", core.RunOptions{Session: core.SessionOptions{ID: "s1"},
		Client: core.ClientInput{State: json.RawMessage(`{"title":"list","todos":[]}`)}})
	if err != nil {
		t.Fatalf("run: %v (%v)", err, types(cs))
	}
	if sys := model.Requests()[0].System; !strings.Contains(sys, `{"title":"list","todos":[]}`) {
		t.Errorf("system prompt %q lacks the state", sys)
	}
	if sys := model.Requests()[2].System; !strings.Contains(sys, `"todos":["milk"]`) || !strings.Contains(sys, `"groceries"`) {
		t.Errorf("the last system prompt %q lacks the patched state", sys)
	}
	var deltas []string
	for _, p := range find[*core.ToolResultPartial](cs) {
		if p.ToolName != engine.StateToolName {
			t.Errorf("partial of %s", p.ToolName)
		}
		deltas = append(deltas, asJSON(t, p.Result))
	}
	want := []string{`{"delta":[{"op":"add","path":"/todos/-","value":"milk"}]}`, `{"delta":[{"op":"replace","path":"/title","value":"groceries"}]}`}
	if !slices.Equal(deltas, want) {
		t.Errorf("deltas %v\nwant   %v", deltas, want)
	}
	if errs := find[*core.ToolError](cs); len(errs) != 1 || errs[0].ToolCallID != "p2" {
		t.Errorf("tool errors %v, want the one of p2", errs)
	}
	stored, err := tb.store.GetSessionState(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	var got, wantDoc any
	_ = json.Unmarshal(stored, &got)
	_ = json.Unmarshal([]byte(`{"title":"groceries","todos":["milk"]}`), &wantDoc)
	if asJSON(t, got) != asJSON(t, wantDoc) {
		t.Errorf("stored state %s", stored)
	}
}

// TestClientInputStaysWithTheTopLevelRun: a delegated run's checkpoint
// resumed with ResumeWith does not give the delegated agent the client's
// tools or state.
func TestClientInputStaysWithTheTopLevelRun(t *testing.T) {
	worker := askAgent()
	worker.ID = "worker"
	wm := modeltest.New(modeltest.ToolCall("human_approve_publish", map[string]string{}), modeltest.Text("worker done"))
	worker.Providers = wm.Registry("mock")
	boss, _ := supervisorAgent(core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "worker", Visibility: core.Hidden}}},
		modeltest.ToolCalls(delegate("d1", "worker", "publish")), modeltest.Text("boss done"))
	tb := newTestbed(t, modeltest.New(), []*core.Agent{boss, worker})
	cs, err := tb.run(t, "boss", "go", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hr := suspendOn(t, cs)
	client := core.ClientInput{Tools: []core.ClientTool{{Name: "pick_color"}}, State: json.RawMessage(`{"a":1}`)}
	if _, err := collect(tb.in.ResumeWith(context.Background(), hr.CheckpointID, okAnswer, client)); err != nil {
		t.Fatal(err)
	}
	for _, spec := range wm.Requests()[1].Tools {
		if spec.Name == "pick_color" || spec.Name == engine.StateToolName {
			t.Errorf("the delegated run was offered %s", spec.Name)
		}
	}
}
