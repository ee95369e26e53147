package agui

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/breadai/bread/core"
)

// historyMessages maps a thread's stored messages to AG-UI messages, the
// shapes @ag-ui/core 1.0 accepts: a user or system message's text; an
// assistant's text (left out when there is none) and its tool calls
// ({id, type: "function", function: {name, arguments}}); one tool message
// per tool result ({toolCallId, content}: a string result as it is,
// anything else as JSON), ids "<message id>#<n>" after the first. Reasoning
// and files are not conversation text and are left out; a message bread
// cannot read is skipped.
func historyMessages(stored []core.SessionMessage) []types.Message {
	out := make([]types.Message, 0, len(stored))
	for _, sm := range stored {
		var m core.Message
		if json.Unmarshal(sm.Content, &m) != nil {
			continue
		}
		switch m.Role {
		case core.RoleUser, core.RoleSystem:
			role := types.RoleUser
			if m.Role == core.RoleSystem {
				role = types.RoleSystem
			}
			out = append(out, types.Message{ID: sm.ID, Role: role, Content: text(m.Parts)})
		case core.RoleAssistant:
			am := types.Message{ID: sm.ID, Role: types.RoleAssistant}
			if t := text(m.Parts); t != "" {
				am.Content = t
			}
			for _, p := range m.Parts {
				if p.Type != core.PartToolCall {
					continue
				}
				args := string(p.Input)
				if args == "" {
					args = "{}"
				}
				am.ToolCalls = append(am.ToolCalls, types.ToolCall{ID: p.ToolCallID, Type: types.ToolCallTypeFunction,
					Function: types.FunctionCall{Name: p.ToolName, Arguments: args}})
			}
			if am.Content == nil && len(am.ToolCalls) == 0 {
				continue
			}
			out = append(out, am)
		case core.RoleTool:
			n := 0
			for _, p := range m.Parts {
				if p.Type != core.PartToolResult {
					continue
				}
				id := sm.ID
				if n > 0 {
					id += "#" + strconv.Itoa(n)
				}
				n++
				out = append(out, types.Message{ID: id, Role: types.RoleTool, ToolCallID: p.ToolCallID, Content: content(p.Output)})
			}
		}
	}
	return out
}

// text joins a message's text parts.
func text(parts []core.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Type == core.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
