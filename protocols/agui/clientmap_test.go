package agui_test

import (
	"encoding/json"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/protocols/agui"
)

// TestClientMappingGolden maps the client side of AG-UI to the JSON lines
// of testdata/*.golden, which TestOfficialClients checks against
// @ag-ui/core 1.0's schemas: a run starting from the client's state and
// the thread's history (STATE_SNAPSHOT, MESSAGES_SNAPSHOT), changing the
// state (STATE_DELTA, a null value kept) with a delegation's progress as
// CUSTOM, and calling client tools, one whose arguments streamed and one
// whose did not (TOOL_CALL_START/ARGS/END, then RUN_FINISHED with no
// outcome); a continuing stream whose message ids are in their own space;
// and a turn that asked a human and a client tool at once (the interrupt
// outcome names the human alone).
func TestClientMappingGolden(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	t.Run("client_state_and_tools", func(t *testing.T) {
		m := agui.NewThreadMapper("thread-1")
		m.SetClientTools([]string{"confirm_order", "pick_color"})
		m.SetState(raw(`{"items":[]}`))
		m.SetMessages([]types.Message{
			{ID: "s1", Role: types.RoleUser, Content: "earlier"},
			{ID: "s2", Role: types.RoleAssistant, ToolCalls: []types.ToolCall{{ID: "c0", Type: types.ToolCallTypeFunction,
				Function: types.FunctionCall{Name: "tool_add", Arguments: `{"a":1}`}}}},
			{ID: "s3", Role: types.RoleTool, ToolCallID: "c0", Content: "1"},
			{ID: "s4", Role: types.RoleAssistant, Content: "One."},
			{ID: "m1", Role: types.RoleUser, Content: "order"},
		})
		cs := []core.Crumb{
			&core.AgentRunStart{CrumbBase: rb(1), Input: "order"},
			&core.ToolCall{CrumbBase: rb(2), ToolCallID: "s1", ToolName: agui.StateToolName, Args: raw(`{"patch":[{"op":"add","path":"/items/-","value":null}]}`)},
			&core.ToolResultPartial{CrumbBase: rb(3), ToolCallID: "s1", ToolName: agui.StateToolName, Result: map[string]any{"delta": raw(`[{"op":"add","path":"/items/-","value":null}]`)}},
			&core.ToolResult{CrumbBase: rb(4), ToolCallID: "s1", ToolName: agui.StateToolName, Result: map[string]any{"state": raw(`{"items":[null]}`)}},
			&core.SubagentRunStart{CrumbBase: rb(5), ParentAgentID: "assistant", SubagentID: "baker"},
			&core.SubagentRunEnd{CrumbBase: rb(6), ParentAgentID: "assistant", SubagentID: "baker", Output: "baked"},
			&core.TextDelta{CrumbBase: rb(7), Delta: "Confirm?"},
			&core.ToolInputStart{CrumbBase: rb(8), ToolCallID: "c1", ToolName: "confirm_order"},
			&core.ToolInputDelta{CrumbBase: rb(9), ToolCallID: "c1", Delta: `{"summary":"1 loaf"}`},
			&core.ToolInputEnd{CrumbBase: rb(10), ToolCallID: "c1"},
			&core.HumanRequired{CrumbBase: rb(11), CheckpointID: "cp-1", ToolName: "confirm_order", ToolCallID: "c1", Schema: raw(`{"summary":"1 loaf"}`), Kind: core.HumanInput, Set: []string{"cp-1", "cp-2"}},
			&core.HumanRequired{CrumbBase: rb(11), CheckpointID: "cp-2", ToolName: "pick_color", ToolCallID: "c2", Schema: raw(`{"hint":"warm"}`), Kind: core.HumanInput, Set: []string{"cp-1", "cp-2"}},
		}
		golden(t, "client_state_and_tools", mapAll(t, m, cs))
	})
	t.Run("client_tool_answered", func(t *testing.T) {
		m := agui.NewThreadMapper("thread-1")
		m.SetClientTools([]string{"confirm_order"})
		m.SetIDSpace("5eed")
		m.SetState(raw(`{"items":[null]}`))
		cs := []core.Crumb{
			&core.HumanResumed{CrumbBase: rb(12), CheckpointID: "cp-1", Response: "confirmed", Kind: core.HumanInput},
			&core.TextDelta{CrumbBase: rb(13), Delta: "Ordered."},
			&core.AgentRunEnd{CrumbBase: rb(14), Output: "Ordered."},
		}
		golden(t, "client_tool_answered", mapAll(t, m, cs))
	})
	t.Run("client_tool_and_human", func(t *testing.T) {
		m := agui.NewThreadMapper("thread-1")
		m.SetClientTools([]string{"confirm_order"})
		cs := []core.Crumb{
			&core.AgentRunStart{CrumbBase: rb(1), Input: "order"},
			&core.HumanRequired{CrumbBase: rb(2), CheckpointID: "cp-1", ToolName: "confirm_order", ToolCallID: "c1", Schema: raw(`{}`), Kind: core.HumanInput, Set: []string{"cp-1", "cp-2"}},
			&core.HumanRequired{CrumbBase: rb(2), CheckpointID: "cp-2", ToolName: "human_pick_day", ToolCallID: "c2", Prompt: "Which day?", Kind: core.HumanInput, Set: []string{"cp-1", "cp-2"}},
		}
		golden(t, "client_tool_and_human", mapAll(t, m, cs))
	})
}
