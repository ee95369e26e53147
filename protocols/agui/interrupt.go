package agui

import (
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/breadai/bread/core"
)

// The reasons of the interrupts a suspended run finishes with.
const (
	// ReasonHumanInput is a human tool waiting for an answer; the resume
	// payload is the answer, checked against the tool's answer schema.
	ReasonHumanInput = "human_input"
	// ReasonToolApproval is an ask-gated tool waiting for approval; the
	// resume payload is {"approved": true|false, "reason"?: "..."}.
	ReasonToolApproval = "tool_approval"
)

// approvalSchema is the responseSchema of a ReasonToolApproval interrupt.
func approvalSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"approved": map[string]any{"type": "boolean"},
			"reason":   map[string]any{"type": "string"},
		},
		"required":             []any{"approved"},
		"additionalProperties": false,
	}
}

// interruptOf is the AG-UI interrupt of a human:required crumb: its id is
// the checkpoint's, which the client names in the resume entry of its next
// RunAgentInput.
func interruptOf(h *core.HumanRequired) types.Interrupt {
	in := types.Interrupt{
		ID:      h.CheckpointID,
		Reason:  ReasonHumanInput,
		Message: h.Prompt,
		Metadata: map[string]any{
			"kind":     string(h.Kind),
			"toolName": h.ToolName,
			"runId":    h.RunID,
		},
	}
	if h.Kind == core.HumanApproval {
		in.Reason = ReasonToolApproval
		in.ResponseSchema = approvalSchema()
	}
	if in.Message == "" {
		in.Message = "Input required for " + h.ToolName
	}
	if args := core.OptionalJSON(h.Schema); args != nil {
		in.Metadata["args"] = args
	}
	return in
}
