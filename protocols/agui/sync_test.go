package agui_test

import (
	"encoding/json"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/protocols/agui"
)

// TestMapperSyncsTheThread maps a run whose thread changes under it: the
// model's core_state_update (STATE_DELTA as written), a Go tool's write
// (read after the tool returned: STATE_DELTA diffed from what the client
// holds), a write after the last tool (read before RUN_FINISHED), then the
// thread's history as MESSAGES_SNAPSHOT with a passthrough delegation's
// messages kept where the client has them. testdata/thread_sync.golden is
// checked against @ag-ui/core's schemas by TestOfficialClients.
func TestMapperSyncsTheThread(t *testing.T) {
	// What the store holds at each read: after the Go tool "restock" (the
	// model's patch and the tool's write), after core_delegate (no
	// change), and as the run ends (something after the last tool, a hook
	// or another replica, changed it again).
	stored := []string{
		`{"items":["flour","yeast"],"restocked":true}`,
		`{"restocked":true,"items":["flour","yeast"]}`,
		`{"items":["flour","yeast"],"restocked":false}`,
	}
	history := []types.Message{
		{ID: "s1", Role: types.RoleUser, Content: "stock up"},
		{ID: "s2", Role: types.RoleAssistant, ToolCalls: []types.ToolCall{{ID: "d1", Type: types.ToolCallTypeFunction, Function: types.FunctionCall{Name: "core_delegate", Arguments: `{"agentId":"writer"}`}}}},
		{ID: "s3", Role: types.RoleTool, ToolCallID: "d1", Content: "draft"},
		{ID: "s4", Role: types.RoleAssistant, Content: "Stocked."},
	}
	reads := 0
	m := agui.NewThreadMapper("thread-1")
	m.SetState(json.RawMessage(`{"items":[]}`))
	m.SetThread(agui.ThreadReader{
		State: func() json.RawMessage {
			reads++
			return json.RawMessage(stored[min(reads, len(stored))-1])
		},
		Messages: func() []types.Message { return history },
	})
	nb := func(ts int64) core.CrumbBase { return b("r2", "writer", ts) }
	golden(t, "thread_sync", mapAll(t, m, []core.Crumb{
		&core.AgentRunStart{CrumbBase: rb(1), Input: "stock up"},
		&core.ToolCall{CrumbBase: rb(2), ToolCallID: "s", ToolName: agui.StateToolName},
		&core.ToolResultPartial{CrumbBase: rb(3), ToolCallID: "s", ToolName: agui.StateToolName, Result: map[string]any{"delta": []any{map[string]any{"op": "add", "path": "/items/-", "value": "flour"}}}},
		&core.ToolResult{CrumbBase: rb(4), ToolCallID: "s", ToolName: agui.StateToolName, Result: "ok"},
		&core.ToolCall{CrumbBase: rb(5), ToolCallID: "g", ToolName: "restock"},
		&core.ToolResult{CrumbBase: rb(6), ToolCallID: "g", ToolName: "restock", Result: "ok"},
		&core.ToolCall{CrumbBase: rb(7), ToolCallID: "d1", ToolName: "core_delegate", Args: map[string]string{"agentId": "writer"}},
		&core.AgentRunStart{CrumbBase: nb(8)},
		&core.TextDelta{CrumbBase: nb(9), Delta: "draft"},
		&core.AgentRunEnd{CrumbBase: nb(10), Output: "draft"},
		&core.ToolResult{CrumbBase: rb(11), ToolCallID: "d1", ToolName: "core_delegate", Result: "draft"},
		&core.TextDelta{CrumbBase: rb(12), Delta: "Stocked."},
		&core.AgentRunEnd{CrumbBase: rb(13), Output: "Stocked."},
	}))
	if reads != 3 { // after restock, after core_delegate, at the end; never after core_state_update
		t.Errorf("the state was read %d times, want 3", reads)
	}
}

// TestSyncStateSnapshotsAnUnknownState: a run the client gave no state
// learns of one a Go tool wrote as STATE_SNAPSHOT, and from then on its
// progress goes as CUSTOM (a snapshot would replace that state); a
// thread without state, or a null one, sends nothing.
func TestSyncStateSnapshotsAnUnknownState(t *testing.T) {
	m := agui.NewThreadMapper("thread-1")
	m.Map(&core.AgentRunStart{CrumbBase: rb(1)})
	if evs := m.SyncState(nil, 2); len(evs) != 0 {
		t.Errorf("no state: %v", evs)
	}
	if evs := m.SyncState(json.RawMessage(" null "), 2); len(evs) != 0 {
		t.Errorf("null state: %v", evs)
	}
	evs := m.SyncState(json.RawMessage(`{"mode":"x"}`), 3)
	if len(evs) != 1 || evs[0].Type() != "STATE_SNAPSHOT" {
		t.Fatalf("first state: %v", evs)
	}
	if evs := m.SyncState(json.RawMessage(`{ "mode": "x" }`), 4); len(evs) != 0 {
		t.Errorf("the same state re-encoded: %v", evs)
	}
	evs = m.SyncState(json.RawMessage(`{"mode":"y"}`), 5)
	line, _ := json.Marshal(evs)
	if string(line) != `[{"type":"STATE_DELTA","timestamp":5,"delta":[{"op":"replace","path":"/mode","value":"y"}]}]` {
		t.Errorf("a change: %s", line)
	}
	evs = m.Map(&core.TaskStart{CrumbBase: rb(6), TaskRunID: "t1", TaskID: "sum"})
	if len(evs) != 2 || evs[1].Type() != "CUSTOM" {
		t.Errorf("progress after the state: %v", evs)
	}
	m.Map(&core.AgentRunEnd{CrumbBase: rb(7)})
	if evs := m.SyncState(json.RawMessage(`{"mode":"z"}`), 8); len(evs) != 0 {
		t.Errorf("outside a run: %v", evs)
	}
}
