package storetest

import (
	"encoding/json"

	"github.com/breadai/bread/core"
)

// fullCrumbs builds one crumb of every type, every field set, payloads that
// exercise big integers and key order, for the byte-for-byte round trip of
// the crumb log. A crumb type missing here fails the round-trip case, so a
// new type added to core is noticed.
func fullCrumbs(runID, sessionID string) map[string]core.Crumb {
	var seq int64
	base := func() core.CrumbBase {
		seq++
		return core.CrumbBase{AgentID: "agent-a", RunID: runID, SessionID: sessionID, Timestamp: baseTime + seq, Seq: seq}
	}
	payload := func(tag string) json.RawMessage {
		return json.RawMessage(`{"tag":"` + tag + `","payload":` + bigPayload + `}`)
	}
	breadErr := func(code string) *core.BreadError {
		return &core.BreadError{
			Code:    code,
			Message: "it went wrong — «badly»",
			Context: map[string]any{"attempt": 3.0, "path": "/tmp/x", "nested": map[string]any{"ok": false, "list": []any{"a", 1.5}}},
		}
	}
	files := []core.FileOutput{
		{URI: "blob://image-1", MimeType: "image/png", Name: "chart.png"},
		{URI: "blob://doc-2", MimeType: "application/pdf", Name: "report.pdf"},
	}
	model := core.TaskModelInfo{Provider: "openai", Model: "gpt-x"}

	list := []core.Crumb{
		&core.AgentRunStart{CrumbBase: base(), Input: payload("input"), Skill: "triage", ParentRunID: "run-of-the-supervisor"},
		&core.TextDelta{CrumbBase: base(), Delta: "Hello, wörld 🍞 <b>"},
		&core.ReasoningDelta{CrumbBase: base(), Delta: "thinking…\n\"quoted\""},
		&core.FileGenerated{CrumbBase: base(), URI: "blob://image-1", MimeType: "image/png", Name: "chart.png"},
		&core.ToolCall{CrumbBase: base(), ToolCallID: "tc-1", ToolName: "lookup", Args: payload("args")},
		&core.ToolInputStart{CrumbBase: base(), ToolCallID: "tc-1", ToolName: "lookup"},
		&core.ToolInputDelta{CrumbBase: base(), ToolCallID: "tc-1", Delta: `{"q":"x`},
		&core.ToolInputEnd{CrumbBase: base(), ToolCallID: "tc-1"},
		&core.ToolResult{CrumbBase: base(), ToolCallID: "tc-1", ToolName: "lookup", Result: payload("result"), DurationMs: 12},
		&core.ToolResultPartial{CrumbBase: base(), ToolCallID: "tc-1", ToolName: "lookup", Result: payload("partial")},
		&core.ToolError{CrumbBase: base(), ToolCallID: "tc-2", ToolName: "fetch", Error: breadErr(core.CodeToolError), DurationMs: 7},
		&core.HumanRequired{CrumbBase: base(), CheckpointID: "cp-1", ToolName: "ask_human", ToolCallID: "tc-1", Schema: payload("schema"), Prompt: "Proceed?", Kind: core.HumanApproval, Set: []string{"cp-1", "cp-2"}},
		&core.HumanResumed{CrumbBase: base(), CheckpointID: "cp-1", Response: payload("response"), Kind: core.HumanInput},
		&core.SubagentRunStart{CrumbBase: base(), ParentAgentID: "supervisor", SubagentID: "researcher"},
		&core.SubagentRunEnd{CrumbBase: base(), ParentAgentID: "supervisor", SubagentID: "researcher", Output: payload("sub-output")},
		&core.PipelineStepStart{CrumbBase: base(), PipelineID: "pipe-1", StepIndex: 2},
		&core.PipelineStepEnd{CrumbBase: base(), PipelineID: "pipe-1", StepIndex: 2, Output: payload("step-output")},
		&core.LoopStart{CrumbBase: base(), LoopID: "loop-1", Pipeline: []string{"writer", "critic"}, MaxIterations: 5},
		&core.LoopIterationStart{CrumbBase: base(), LoopID: "loop-1", Iteration: 1},
		&core.LoopIterationEnd{CrumbBase: base(), LoopID: "loop-1", Iteration: 1, Output: payload("iteration-output")},
		&core.LoopEnd{CrumbBase: base(), LoopID: "loop-1", Status: core.LoopCompleted, Iterations: 1, Result: payload("loop-result")},
		&core.TaskStart{CrumbBase: base(), TaskRunID: "tr-1", TaskID: "extract", Model: model},
		&core.TaskEnd{CrumbBase: base(), TaskRunID: "tr-1", TaskID: "extract", Status: core.TaskFailed, DurationMs: 99,
			Usage: &core.Usage{InputTokens: 120, OutputTokens: 30, TotalTokens: 150}, Error: "schema mismatch"},
		&core.AgentRunEnd{CrumbBase: base(), Output: payload("output"), DurationMs: 1234, Files: files,
			Usage: &core.Usage{InputTokens: 120, OutputTokens: 30, TotalTokens: 150}, ModelCalls: []core.Usage{{InputTokens: 100, OutputTokens: 20, TotalTokens: 120}, {InputTokens: 20, OutputTokens: 10, TotalTokens: 30}}},
		&core.AgentError{CrumbBase: base(), Error: breadErr(core.CodeAgentError)},
	}
	out := make(map[string]core.Crumb, len(list))
	for _, c := range list {
		out[c.CrumbType()] = c
	}
	return out
}
