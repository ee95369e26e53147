package engine

import (
	"context"
	"encoding/json"

	"github.com/breadai/bread/core"
)

// closeInterrupted keeps a session well formed when a run stops without
// answering (it failed, was cancelled, or its process died): without it the
// next run's history would hold a user message with no reply, or tool calls
// with no results, which providers refuse. It answers any tool call left
// open with an error result, then records the interruption as the
// assistant's reply. A failing run calls it only when it wrote to the
// session itself; the sweeper passes since, the time the lost run last
// started, so a suspended run's pending call from before is never closed.
func (in *Instance) closeInterrupted(ctx context.Context, sessionID string, since int64, code string) {
	if sessionID == "" {
		return
	}
	ctx = context.WithoutCancel(ctx)
	msgs, err := in.store.GetMessages(ctx, sessionID)
	if err != nil || len(msgs) == 0 {
		return
	}
	last := msgs[len(msgs)-1]
	if last.Timestamp < since {
		return
	}
	var m core.Message
	if err := json.Unmarshal(last.Content, &m); err != nil {
		return
	}
	var add []core.Message
	switch m.Role {
	case core.RoleUser, core.RoleTool:
	case core.RoleAssistant:
		var results []core.Part
		for _, p := range m.Parts {
			if p.Type == core.PartToolCall {
				out, _ := json.Marshal(map[string]string{"error": code, "message": "the run ended before this call returned"})
				results = append(results, core.Part{Type: core.PartToolResult, ToolCallID: p.ToolCallID, ToolName: p.ToolName, Output: out, IsError: true})
			}
		}
		if len(results) == 0 {
			return // the assistant had the last word: nothing is open
		}
		add = append(add, core.Message{Role: core.RoleTool, Parts: results})
	default:
		return
	}
	add = append(add, core.Message{Role: core.RoleAssistant, Parts: []core.Part{core.TextPart("[interrupted: " + code + "]")}})
	if err := in.persist(ctx, sessionID, add...); err != nil {
		in.log.Warn("bread: recording a run's interruption in its session failed", "session_id", sessionID, "error", err)
	}
}
