package engine_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/typed"
)

func TestPermissionsShapeTheToolset(t *testing.T) {
	read := typed.DefineTool("read_notes", "", func(context.Context, struct{}, core.ToolContext) (string, error) { return "", nil })
	del := typed.DefineTool("delete_everything", "", func(context.Context, struct{}, core.ToolContext) (string, error) { return "", nil })
	a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{weatherTool(), read, del},
		Permissions: core.Permissions{Allow: []string{"tool:read_*", "tool:weather"}, Ask: []string{"tool:weather"}, Deny: []string{"tool:delete_*"}}}
	tb := newTestbed(t, modeltest.New(modeltest.Text("x")), []*core.Agent{a})
	if _, err := tb.run(t, "a", "x", core.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range tb.model.Requests()[0].Tools {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"tool_read_notes", "tool_weather"}) {
		t.Errorf("tools offered %v", names)
	}
}

func TestGatedToolSuspendsForApproval(t *testing.T) {
	ran := false
	tool := weatherTool()
	inner := tool.Execute
	tool.Execute = func(ctx context.Context, raw json.RawMessage, tc core.ToolContext) (any, error) {
		ran = true
		return inner(ctx, raw, tc)
	}
	a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{tool}, Permissions: core.Permissions{Ask: []string{"tool:weather"}}}
	var suspended string
	a.Hooks.OnSuspend = func(_ context.Context, hc core.HookContext, toolName, cp string) { suspended = toolName + "@" + cp }
	tb := newTestbed(t, modeltest.New(modeltest.ToolCall("tool_weather", cityArgs{City: "Rome"})), []*core.Agent{a})
	cs, err := tb.run(t, "a", "x", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, cs, core.TypeAgentRunStart, core.TypeHumanRequired)
	hr := cs[1].(*core.HumanRequired)
	if ran || hr.Kind != core.HumanApproval || hr.ToolName != "tool_weather" || string(hr.Schema.(json.RawMessage)) != `{"city":"Rome"}` {
		t.Errorf("human:required %+v (tool ran: %v)", hr, ran)
	}
	if suspended != "tool_weather@"+hr.CheckpointID {
		t.Errorf("onSuspend saw %q", suspended)
	}
	cp, err := tb.store.GetCheckpoint(context.Background(), hr.CheckpointID)
	if err != nil || cp.ToolCallID != "call-tool_weather" || cp.Kind != core.HumanApproval || cp.RunID != hr.RunID {
		t.Errorf("checkpoint %+v %v", cp, err)
	}
	msgs := tb.messages(t, hr.SessionID)
	if len(msgs) != 2 || msgs[1].Parts[0].Type != core.PartToolCall {
		t.Errorf("the pending call is persisted with the checkpoint: %+v", msgs)
	}
}
