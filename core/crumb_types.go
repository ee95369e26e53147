package core

// The crumb type discriminators, exactly as they appear on the wire.
const (
	TypeAgentRunStart      = "agent:run:start"
	TypeAgentRunEnd        = "agent:run:end"
	TypeTextDelta          = "text:delta"
	TypeReasoningDelta     = "reasoning:delta"
	TypeFileGenerated      = "file:generated"
	TypeToolCall           = "tool:call"
	TypeToolResult         = "tool:result"
	TypeToolResultPartial  = "tool:result:partial"
	TypeToolError          = "tool:error"
	TypeToolInputStart     = "tool:input:start"
	TypeToolInputDelta     = "tool:input:delta"
	TypeToolInputEnd       = "tool:input:end"
	TypeHumanRequired      = "human:required"
	TypeHumanResumed       = "human:resumed"
	TypeSubagentRunStart   = "subagent:run:start"
	TypeSubagentRunEnd     = "subagent:run:end"
	TypePipelineStepStart  = "pipeline:step:start"
	TypePipelineStepEnd    = "pipeline:step:end"
	TypeLoopStart          = "loop:start"
	TypeLoopIterationStart = "loop:iteration:start"
	TypeLoopIterationEnd   = "loop:iteration:end"
	TypeLoopEnd            = "loop:end"
	TypeTaskStart          = "task:start"
	TypeTaskEnd            = "task:end"
	TypeAgentError         = "agent:error"
)

// HumanKind says what a human:required crumb waits for.
type HumanKind string

const (
	// HumanInput is a human tool awaiting an answer.
	HumanInput HumanKind = "input"
	// HumanApproval is an ask-gated tool awaiting approve or reject.
	HumanApproval HumanKind = "approval"
)

// AgentRunStart opens a run. ParentRunID is the run that started this
// one, when one did and its start was seen (a supervisor's delegation, a
// loop's iteration, a run started by a tool): what a console nests the
// run under. A top-level run, and a run resumed from its checkpoint, have
// none.
type AgentRunStart struct {
	CrumbBase
	Input       any    `json:"input"`
	Skill       string `json:"skill,omitempty"`
	ParentRunID string `json:"parentRunId,omitempty"`
}

// AgentRunEnd closes a run with its output. Files lists what the model
// generated directly during the run; it is omitted when there are none.
//
// Usage is the tokens of the run's own model calls (a delegation's are on
// its own run's end) since the run started or was last resumed, and
// ModelCalls each of those calls' usage in order: what a console shows
// per model call and per run. Both are omitted when the model reported no
// usage.
type AgentRunEnd struct {
	CrumbBase
	Output     any          `json:"output"`
	DurationMs int64        `json:"durationMs"`
	Files      []FileOutput `json:"files,omitempty"`
	Usage      *Usage       `json:"usage,omitempty"`
	ModelCalls []Usage      `json:"modelCalls,omitempty"`
}

// TextDelta is a piece of the model's answer.
type TextDelta struct {
	CrumbBase
	Delta string `json:"delta"`
}

// ReasoningDelta is a piece of a reasoning model's thinking, a separate
// channel from the answer.
type ReasoningDelta struct {
	CrumbBase
	Delta string `json:"delta"`
}

// FileGenerated reports a file the model produced, already stored through the
// BlobStore.
type FileGenerated struct {
	CrumbBase
	URI      string `json:"uri"`
	MimeType string `json:"mimeType"`
	Name     string `json:"name,omitempty"`
}

// ToolCall reports a tool invocation with its complete, parsed arguments.
type ToolCall struct {
	CrumbBase
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	Args       any    `json:"args"`
}

// ToolResult reports a tool's final result.
type ToolResult struct {
	CrumbBase
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	Result     any    `json:"result"`
	DurationMs int64  `json:"durationMs"`
}

// ToolResultPartial is one intermediate value of a streaming tool.
type ToolResultPartial struct {
	CrumbBase
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	Result     any    `json:"result"`
}

// ToolError reports a tool that failed and was not recovered by a hook.
type ToolError struct {
	CrumbBase
	ToolCallID string      `json:"toolCallId"`
	ToolName   string      `json:"toolName"`
	Error      *BreadError `json:"error"`
	DurationMs int64       `json:"durationMs"`
}

// ToolInputStart opens the streamed assembly of a tool call's arguments.
type ToolInputStart struct {
	CrumbBase
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
}

// ToolInputDelta is a fragment of a tool call's JSON arguments.
type ToolInputDelta struct {
	CrumbBase
	ToolCallID string `json:"toolCallId"`
	Delta      string `json:"delta"`
}

// ToolInputEnd closes argument assembly (not execution: that is tool:result).
type ToolInputEnd struct {
	CrumbBase
	ToolCallID string `json:"toolCallId"`
}

// HumanRequired suspends a run until a human answers; it ends the stream of
// the call that produced it.
type HumanRequired struct {
	CrumbBase
	CheckpointID string `json:"checkpointId"`
	ToolName     string `json:"toolName"`
	// ToolCallID is the model's id of the pending call, which a client
	// answering the call as a tool (a client tool) names.
	ToolCallID string    `json:"toolCallId,omitempty"`
	Schema     any       `json:"schema"`
	Prompt     string    `json:"prompt,omitempty"`
	Kind       HumanKind `json:"kind"`
	// Set lists every checkpoint the run waits on, this one included, when
	// the model called several human tools at once: each is answered on its
	// own, and the run continues after the last answer. An answer that
	// leaves others pending ends its resume with a human:required for each
	// of them, Set then listing those. See EndsCall.
	Set []string `json:"set,omitempty"`
}

// HumanResumed opens the continuation stream of a resumed run.
type HumanResumed struct {
	CrumbBase
	CheckpointID string    `json:"checkpointId"`
	Response     any       `json:"response"`
	Kind         HumanKind `json:"kind"`
}

// SubagentRunStart reports a supervisor delegating to a sub-agent.
type SubagentRunStart struct {
	CrumbBase
	ParentAgentID string `json:"parentAgentId"`
	SubagentID    string `json:"subagentId"`
}

// SubagentRunEnd reports a delegation's output.
type SubagentRunEnd struct {
	CrumbBase
	ParentAgentID string `json:"parentAgentId"`
	SubagentID    string `json:"subagentId"`
	Output        any    `json:"output"`
}

// PipelineStepStart frames one pipeline step. It carries no session and is
// numbered but never logged.
type PipelineStepStart struct {
	CrumbBase
	PipelineID string `json:"pipelineId"`
	StepIndex  int    `json:"stepIndex"`
}

// PipelineStepEnd closes one pipeline step with its output.
type PipelineStepEnd struct {
	CrumbBase
	PipelineID string `json:"pipelineId"`
	StepIndex  int    `json:"stepIndex"`
	Output     any    `json:"output"`
}

// LoopStart opens an agent-driven loop.
type LoopStart struct {
	CrumbBase
	LoopID        string   `json:"loopId"`
	Pipeline      []string `json:"pipeline"`
	MaxIterations int      `json:"maxIterations"`
}

// LoopIterationStart opens one iteration (1-based).
type LoopIterationStart struct {
	CrumbBase
	LoopID    string `json:"loopId"`
	Iteration int    `json:"iteration"`
}

// LoopIterationEnd closes one iteration with its output.
type LoopIterationEnd struct {
	CrumbBase
	LoopID    string `json:"loopId"`
	Iteration int    `json:"iteration"`
	Output    any    `json:"output"`
}

// LoopEnd closes a loop with its final status.
type LoopEnd struct {
	CrumbBase
	LoopID     string     `json:"loopId"`
	Status     LoopStatus `json:"status"`
	Iterations int        `json:"iterations"`
	Result     any        `json:"result,omitempty"`
}

// TaskStart reports a one-shot task starting inside a run.
type TaskStart struct {
	CrumbBase
	TaskRunID string        `json:"taskRunId"`
	TaskID    string        `json:"taskId"`
	Model     TaskModelInfo `json:"model"`
}

// TaskModelInfo names the model a task ran on.
type TaskModelInfo struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// TaskEnd reports a one-shot task's outcome inside a run.
type TaskEnd struct {
	CrumbBase
	TaskRunID  string        `json:"taskRunId"`
	TaskID     string        `json:"taskId"`
	Status     TaskRunStatus `json:"status"`
	DurationMs int64         `json:"durationMs"`
	Usage      *Usage        `json:"usage,omitempty"`
	Error      string        `json:"error,omitempty"`
}

// AgentError ends a run that failed. RunID and SessionID may be empty when the
// run failed before it had them (an unknown agent, invalid input).
type AgentError struct {
	CrumbBase
	Error *BreadError `json:"error"`
}

// FileOutput points at a stored file. On the wire it always carries
// kind:"file".
type FileOutput struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitempty"`
	Name     string `json:"name,omitempty"`
}

// MarshalJSON writes the original's FilePart shape, kind first.
func (f FileOutput) MarshalJSON() ([]byte, error) {
	type plain FileOutput
	return marshalTagged("kind", "file", plain(f))
}

// Usage counts the tokens of a model call. Zero fields are omitted.
type Usage struct {
	InputTokens  int64 `json:"inputTokens,omitempty"`
	OutputTokens int64 `json:"outputTokens,omitempty"`
	TotalTokens  int64 `json:"totalTokens,omitempty"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:  u.InputTokens + o.InputTokens,
		OutputTokens: u.OutputTokens + o.OutputTokens,
		TotalTokens:  u.TotalTokens + o.TotalTokens,
	}
}
