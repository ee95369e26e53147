package agui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/protocols/agui"
	"github.com/breadai/bread/typed"
)

// clientRunInput is a RunAgentInput with the client's state, tools,
// context and forwarded properties.
func clientRunInput(thread string, state any, messages ...map[string]any) string {
	b, _ := json.Marshal(map[string]any{
		"threadId": thread, "runId": "client-run", "state": state, "messages": messages,
		"tools": []any{map[string]any{"name": "confirm_order", "description": "Ask the user to confirm the order on the page",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"item": map[string]any{"type": "string"}}}}},
		"context":        []any{map[string]any{"description": "page", "value": "/cart"}},
		"forwardedProps": map[string]any{"locale": "it"},
	})
	return string(b)
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFrontendToolAndState drives the whole client side of AG-UI on every
// store: a run that starts from the client's state (STATE_SNAPSHOT),
// changes it (STATE_DELTA, stored with the thread) and calls a tool of the
// client (TOOL_CALL_START/ARGS/END, then RUN_FINISHED with no outcome); the
// client's next RunAgentInput carries the tool message (its content as text
// parts), which continues the
// same bread run with the model reading the result; a tool message no call
// waits for is refused; and a page opened on the thread with only its new
// message gets the thread's history as MESSAGES_SNAPSHOT.
func TestFrontendToolAndState(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		model := modeltest.New(
			modeltest.ToolCall(agui.StateToolName, map[string]any{"patch": []any{map[string]any{"op": "add", "path": "/todos/-", "value": "milk"}}}),
			modeltest.ToolCall("confirm_order", map[string]any{"item": "milk"}),
			modeltest.Text("Ordered."),
			modeltest.Text("Hello again."),
		)
		agent := &core.Agent{ID: "assistant", Model: core.ModelRef{Provider: "own", Model: "m"}, Providers: model.Registry("own")}
		s := newStack(t, setup{store: open(t), agents: []*core.Agent{agent}})
		user := map[string]any{"id": "m1", "role": "user", "content": "order milk"}

		// 1. The run changes the state and calls the client's tool.
		status, evs, code := s.post(t, clientRunInput("thread-f", map[string]any{"todos": []any{}}, user), nil)
		if status != http.StatusOK {
			t.Fatalf("run: %d %s", status, code)
		}
		wantTypes(t, evs, "RUN_STARTED", "STATE_SNAPSHOT",
			"TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "STATE_DELTA", "TOOL_CALL_RESULT",
			"TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "MESSAGES_SNAPSHOT", "RUN_FINISHED")
		if got := jsonOf(t, evs[1]["snapshot"]); got != `{"todos":[]}` {
			t.Errorf("STATE_SNAPSHOT %s", got)
		}
		if got := jsonOf(t, evs[5]["delta"]); got != `[{"op":"add","path":"/todos/-","value":"milk"}]` {
			t.Errorf("STATE_DELTA %s", got)
		}
		call := evs[7]
		if call["toolCallName"] != "confirm_order" || call["toolCallId"] != "call-confirm_order" || evs[8]["delta"] != `{"item":"milk"}` {
			t.Errorf("the client tool's call %v %v", call, evs[8])
		}
		fin := evs[len(evs)-1]
		if fin["outcome"] != nil || fin["result"] != nil {
			t.Errorf("RUN_FINISHED of a run waiting on the client %v", fin)
		}
		system := model.Requests()[0].System
		if !strings.Contains(system, "- page: /cart") || !strings.Contains(system, `{"todos":[]}`) {
			t.Errorf("system prompt %q lacks the client's context or state", system)
		}
		if !slices.ContainsFunc(model.Requests()[0].Tools, func(s core.ToolSpec) bool { return s.Name == "confirm_order" }) {
			t.Errorf("the model was not offered the client's tool: %v", model.Requests()[0].Tools)
		}
		runID := evs[0]["runId"]

		// 2. A tool message no call waits for is refused; nothing runs.
		stray := map[string]any{"id": "t0", "role": "tool", "toolCallId": "no-such-call", "content": "x"}
		if status, _, code := s.post(t, clientRunInput("thread-f", map[string]any{"todos": []any{"milk"}}, user, stray), nil); status != 404 || code != core.CodeCheckpointNotFound {
			t.Errorf("a stray tool message: %d %s, want 404 %s", status, code, core.CodeCheckpointNotFound)
		}

		// 3. The tool message continues the same run.
		assistant := map[string]any{"id": "a1", "role": "assistant", "toolCalls": []any{map[string]any{"id": "call-confirm_order", "type": "function",
			"function": map[string]any{"name": "confirm_order", "arguments": `{"item":"milk"}`}}}}
		// Its content as text parts, which @ag-ui/core allows: joined.
		answer := map[string]any{"id": "t1", "role": "tool", "toolCallId": "call-confirm_order",
			"content": []any{map[string]any{"type": "text", "text": "confirm"}, map[string]any{"type": "text", "text": "ed"}}}
		status, evs, code = s.post(t, clientRunInput("thread-f", map[string]any{"todos": []any{"milk"}}, user, assistant, answer), nil)
		if status != http.StatusOK {
			t.Fatalf("answer: %d %s", status, code)
		}
		wantTypes(t, evs, "RUN_STARTED", "STATE_SNAPSHOT", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "MESSAGES_SNAPSHOT", "RUN_FINISHED")
		if evs[0]["runId"] != runID || evs[len(evs)-1]["result"] != "Ordered." {
			t.Errorf("the continuation %v … %v, want run %v finishing with Ordered.", evs[0], evs[len(evs)-1], runID)
		}
		req := model.Requests()[2]
		last := req.Messages[len(req.Messages)-1]
		if last.Role != core.RoleTool || len(last.Parts) != 1 || last.Parts[0].ToolCallID != "call-confirm_order" || string(last.Parts[0].Output) != `"confirmed"` {
			t.Errorf("the model's last message %+v, want the client's result", last)
		}
		state, err := s.in.Storage().GetSessionState(t.Context(), "thread-f")
		if err != nil || string(state) != `{"todos":["milk"]}` {
			t.Errorf("the thread's state %s (%v)", state, err)
		}
		// The answer was given once.
		if status, _, code := s.post(t, clientRunInput("thread-f", nil, user, assistant, answer), nil); status != 404 || code != core.CodeCheckpointNotFound {
			t.Errorf("the same answer again: %d %s", status, code)
		}

		// 4. A page that knows nothing of the thread: MESSAGES_SNAPSHOT,
		// and the stored state, which it did not send.
		again := map[string]any{"id": "m9", "role": "user", "content": "hi"}
		status, evs, code = s.post(t, clientRunInput("thread-f", nil, again), nil)
		if status != http.StatusOK {
			t.Fatalf("new page: %d %s", status, code)
		}
		wantTypes(t, evs, "RUN_STARTED", "STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "MESSAGES_SNAPSHOT", "RUN_FINISHED")
		if got := jsonOf(t, evs[1]["snapshot"]); got != `{"todos":["milk"]}` {
			t.Errorf("STATE_SNAPSHOT of the stored state %s", got)
		}
		shape := shapeOf(t, evs[2]["messages"])
		want := []string{
			"user:order milk",
			"assistant:call " + agui.StateToolName,
			`tool:{"state":{"todos":["milk"]}}:for call-` + agui.StateToolName,
			"assistant:call confirm_order",
			"tool:confirmed:for call-confirm_order",
			"assistant:Ordered.",
			"user:hi",
		}
		if !slices.Equal(shape, want) {
			t.Errorf("MESSAGES_SNAPSHOT\n got %q\nwant %q", shape, want)
		}
		// The snapshot itself, its store-made ids and timestamp replaced,
		// is the same on every store, and a golden file that
		// TestOfficialClients checks against @ag-ui/core's schemas.
		snap := evs[2]
		snap["timestamp"] = 1
		for i, m := range snap["messages"].([]any) {
			m.(map[string]any)["id"] = "id-" + strconv.Itoa(i)
		}
		line, err := json.Marshal(snap)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "messages_snapshot_history", append(line, '\n'))
	})
}

// shapeOf is a MESSAGES_SNAPSHOT's messages, one "role:content:call
// <tool>:for <call id>" line each; every message must have an id.
func shapeOf(t *testing.T, messages any) []string {
	t.Helper()
	var shape []string
	for _, m := range asSlice(messages) {
		m := m.(map[string]any)
		entry := m["role"].(string)
		if c, ok := m["content"].(string); ok {
			entry += ":" + c
		}
		for _, tc := range asSlice(m["toolCalls"]) {
			entry += ":call " + tc.(map[string]any)["function"].(map[string]any)["name"].(string)
		}
		if id, ok := m["toolCallId"].(string); ok {
			entry += ":for " + id
		}
		if id, _ := m["id"].(string); id == "" {
			t.Errorf("message without id %v", m)
		}
		shape = append(shape, entry)
	}
	return shape
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// TestGoToolStateReachesTheClient: a Go tool that writes the thread's
// state (Storage.PutSessionState) is seen by the client in the same run,
// on every store: STATE_DELTA diffed from the state the client sent, right
// after the tool's result; in a run the client gave no state, a
// STATE_SNAPSHOT. The run ends with the thread's history, the tool's
// result among it.
func TestGoToolStateReachesTheClient(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		var s *stack
		restock := typed.DefineTool("restock", "Restock the shelf.", func(ctx context.Context, _ struct{}, tc core.ToolContext) (string, error) {
			st := map[string]any{}
			if doc, err := s.in.Storage().GetSessionState(ctx, tc.SessionID); err == nil && len(doc) > 0 {
				if err := json.Unmarshal(doc, &st); err != nil || st == nil {
					return "", fmt.Errorf("the thread's state %s is not an object: %v", doc, err)
				}
			}
			st["shelf"] = []any{"rye", "spelt"}
			st["restocked"] = true
			next, _ := json.Marshal(st)
			return "restocked", s.in.Storage().PutSessionState(ctx, tc.SessionID, next)
		})
		agent := scripted("assistant",
			modeltest.ToolCall("tool_restock", map[string]any{}), modeltest.Text("Restocked."),
			modeltest.ToolCall("tool_restock", map[string]any{}), modeltest.Text("Again."))
		agent.Tools = []core.Tool{restock}
		s = newStack(t, setup{store: open(t), agents: []*core.Agent{agent}})
		user := map[string]any{"id": "m1", "role": "user", "content": "restock"}

		status, evs, code := s.post(t, clientRunInput("thread-g", map[string]any{"shelf": []any{"rye"}}, user), nil)
		if status != http.StatusOK {
			t.Fatalf("run: %d %s", status, code)
		}
		wantTypes(t, evs, "RUN_STARTED", "STATE_SNAPSHOT", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
			"STATE_DELTA", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "MESSAGES_SNAPSHOT", "RUN_FINISHED")
		if got := jsonOf(t, evs[6]["delta"]); got != `[{"op":"add","path":"/restocked","value":true},{"op":"add","path":"/shelf/1","value":"spelt"}]` {
			t.Errorf("STATE_DELTA %s", got)
		}
		want := []string{"user:restock", "assistant:call tool_restock", "tool:restocked:for call-tool_restock", "assistant:Restocked."}
		if got := shapeOf(t, evs[10]["messages"]); !slices.Equal(got, want) {
			t.Errorf("MESSAGES_SNAPSHOT\n got %q\nwant %q", got, want)
		}

		// A new thread, no state from the client: the tool's state is a
		// snapshot.
		status, evs, code = s.post(t, clientRunInput("thread-g2", nil, user), nil)
		if status != http.StatusOK {
			t.Fatalf("stateless run: %d %s", status, code)
		}
		wantTypes(t, evs, "RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
			"STATE_SNAPSHOT", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "MESSAGES_SNAPSHOT", "RUN_FINISHED")
		var snap map[string]any
		if err := json.Unmarshal([]byte(jsonOf(t, evs[5]["snapshot"])), &snap); err != nil || snap["restocked"] != true || len(asSlice(snap["shelf"])) != 2 {
			t.Errorf("STATE_SNAPSHOT %v (%v)", evs[5]["snapshot"], err)
		}
	})
}
