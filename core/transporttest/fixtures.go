package transporttest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/google/uuid"
)

// runID returns a run id unique to this test, so transports backed by a
// shared server (Redis) never see another test's frames.
func runID(t *testing.T, label string) string {
	return strings.NewReplacer("/", "-", " ", "_").Replace(t.Name()) + "-" + label + "-" + uuid.NewString()[:8]
}

func base(run string, seq int64) core.CrumbBase {
	return core.CrumbBase{AgentID: "agent", RunID: run, SessionID: "session", Timestamp: 1700000000000, Seq: seq}
}

func frame(run string, seq int64) core.Frame {
	return core.Frame{RunID: run, Seq: seq, Crumb: &core.ToolInputEnd{CrumbBase: base(run, seq), ToolCallID: "call"}}
}

// EveryCrumb returns one fully populated crumb of every type, for a run.
// Adapter tests can use it too.
func EveryCrumb(run string) []core.Crumb {
	b := base(run, 0)
	raw := json.RawMessage(`{"n":12345678901234567890,"nested":{"list":[1,"two",null]},"text":"héllo"}`)
	be := &core.BreadError{Code: core.CodeToolError, Message: "boom", Context: map[string]any{"attempt": float64(2)}}
	return []core.Crumb{
		&core.AgentRunStart{CrumbBase: b, Input: raw, Skill: "deep-research", ParentRunID: "run-of-the-supervisor"},
		&core.TextDelta{CrumbBase: b, Delta: "Bread is "},
		&core.ReasoningDelta{CrumbBase: b, Delta: "thinking"},
		&core.FileGenerated{CrumbBase: b, URI: "file:///tmp/a.png", MimeType: "image/png", Name: "a.png"},
		&core.ToolCall{CrumbBase: b, ToolCallID: "c1", ToolName: "tool_search", Args: raw},
		&core.ToolInputStart{CrumbBase: b, ToolCallID: "c1", ToolName: "tool_search"},
		&core.ToolInputDelta{CrumbBase: b, ToolCallID: "c1", Delta: `{"q":`},
		&core.ToolInputEnd{CrumbBase: b, ToolCallID: "c1"},
		&core.ToolResult{CrumbBase: b, ToolCallID: "c1", ToolName: "tool_search", Result: raw, DurationMs: 12},
		&core.ToolResultPartial{CrumbBase: b, ToolCallID: "c1", ToolName: "tool_search", Result: raw},
		&core.ToolError{CrumbBase: b, ToolCallID: "c1", ToolName: "tool_search", Error: be, DurationMs: 3},
		&core.HumanRequired{CrumbBase: b, CheckpointID: "cp", ToolName: "human_ask", Schema: raw, Prompt: "Approve?", Kind: core.HumanApproval},
		&core.HumanResumed{CrumbBase: b, CheckpointID: "cp", Response: raw, Kind: core.HumanInput},
		&core.SubagentRunStart{CrumbBase: b, ParentAgentID: "boss", SubagentID: "worker"},
		&core.SubagentRunEnd{CrumbBase: b, ParentAgentID: "boss", SubagentID: "worker", Output: raw},
		&core.PipelineStepStart{CrumbBase: core.CrumbBase{AgentID: "a", RunID: run, Timestamp: 1}, PipelineID: "p", StepIndex: 1},
		&core.PipelineStepEnd{CrumbBase: core.CrumbBase{AgentID: "a", RunID: run, Timestamp: 1}, PipelineID: "p", StepIndex: 1, Output: raw},
		&core.LoopStart{CrumbBase: b, LoopID: "l", Pipeline: []string{"a", "b"}, MaxIterations: 3},
		&core.LoopIterationStart{CrumbBase: b, LoopID: "l", Iteration: 1},
		&core.LoopIterationEnd{CrumbBase: b, LoopID: "l", Iteration: 1, Output: raw},
		&core.LoopEnd{CrumbBase: b, LoopID: "l", Status: core.LoopCompleted, Iterations: 1, Result: raw},
		&core.TaskStart{CrumbBase: b, TaskRunID: "tr", TaskID: "extract", Model: core.TaskModelInfo{Provider: "openai", Model: "gpt"}},
		&core.TaskEnd{CrumbBase: b, TaskRunID: "tr", TaskID: "extract", Status: core.TaskFailed, DurationMs: 9, Usage: &core.Usage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3}, Error: "bad"},
		&core.AgentRunEnd{CrumbBase: b, Output: raw, DurationMs: 100, Files: []core.FileOutput{{URI: "file:///tmp/a.png", MimeType: "image/png"}}},
		&core.AgentError{CrumbBase: b, Error: be},
	}
}
