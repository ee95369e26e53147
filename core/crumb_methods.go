package core

// The methods every crumb type shares: its discriminator, its wire encoding
// (discriminator first) and, for crumbs with free-form JSON fields, the list
// DecodeCrumb fills with json.RawMessage. One block per type, kept in the
// order of crumb_types.go.

// CrumbType implements Crumb.
func (*AgentRunStart) CrumbType() string { return TypeAgentRunStart }

// MarshalJSON writes the wire form with "type" first.
func (c AgentRunStart) MarshalJSON() ([]byte, error) {
	type plain AgentRunStart
	return marshalTagged("type", TypeAgentRunStart, plain(c))
}

func (c *AgentRunStart) rawPayload() []*any { return []*any{&c.Input} }

// CrumbType implements Crumb.
func (*AgentRunEnd) CrumbType() string { return TypeAgentRunEnd }

// MarshalJSON writes the wire form with "type" first.
func (c AgentRunEnd) MarshalJSON() ([]byte, error) {
	type plain AgentRunEnd
	return marshalTagged("type", TypeAgentRunEnd, plain(c))
}

func (c *AgentRunEnd) rawPayload() []*any { return []*any{&c.Output} }

// CrumbType implements Crumb.
func (*TextDelta) CrumbType() string { return TypeTextDelta }

// MarshalJSON writes the wire form with "type" first.
func (c TextDelta) MarshalJSON() ([]byte, error) {
	type plain TextDelta
	return marshalTagged("type", TypeTextDelta, plain(c))
}

// CrumbType implements Crumb.
func (*ReasoningDelta) CrumbType() string { return TypeReasoningDelta }

// MarshalJSON writes the wire form with "type" first.
func (c ReasoningDelta) MarshalJSON() ([]byte, error) {
	type plain ReasoningDelta
	return marshalTagged("type", TypeReasoningDelta, plain(c))
}

// CrumbType implements Crumb.
func (*FileGenerated) CrumbType() string { return TypeFileGenerated }

// MarshalJSON writes the wire form with "type" first.
func (c FileGenerated) MarshalJSON() ([]byte, error) {
	type plain FileGenerated
	return marshalTagged("type", TypeFileGenerated, plain(c))
}

// CrumbType implements Crumb.
func (*ToolCall) CrumbType() string { return TypeToolCall }

// MarshalJSON writes the wire form with "type" first.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	type plain ToolCall
	return marshalTagged("type", TypeToolCall, plain(c))
}

func (c *ToolCall) rawPayload() []*any { return []*any{&c.Args} }

// CrumbType implements Crumb.
func (*ToolResult) CrumbType() string { return TypeToolResult }

// MarshalJSON writes the wire form with "type" first.
func (c ToolResult) MarshalJSON() ([]byte, error) {
	type plain ToolResult
	return marshalTagged("type", TypeToolResult, plain(c))
}

func (c *ToolResult) rawPayload() []*any { return []*any{&c.Result} }

// CrumbType implements Crumb.
func (*ToolResultPartial) CrumbType() string { return TypeToolResultPartial }

// MarshalJSON writes the wire form with "type" first.
func (c ToolResultPartial) MarshalJSON() ([]byte, error) {
	type plain ToolResultPartial
	return marshalTagged("type", TypeToolResultPartial, plain(c))
}

func (c *ToolResultPartial) rawPayload() []*any { return []*any{&c.Result} }

// CrumbType implements Crumb.
func (*ToolError) CrumbType() string { return TypeToolError }

// MarshalJSON writes the wire form with "type" first.
func (c ToolError) MarshalJSON() ([]byte, error) {
	type plain ToolError
	return marshalTagged("type", TypeToolError, plain(c))
}

// CrumbType implements Crumb.
func (*ToolInputStart) CrumbType() string { return TypeToolInputStart }

// MarshalJSON writes the wire form with "type" first.
func (c ToolInputStart) MarshalJSON() ([]byte, error) {
	type plain ToolInputStart
	return marshalTagged("type", TypeToolInputStart, plain(c))
}

// CrumbType implements Crumb.
func (*ToolInputDelta) CrumbType() string { return TypeToolInputDelta }

// MarshalJSON writes the wire form with "type" first.
func (c ToolInputDelta) MarshalJSON() ([]byte, error) {
	type plain ToolInputDelta
	return marshalTagged("type", TypeToolInputDelta, plain(c))
}

// CrumbType implements Crumb.
func (*ToolInputEnd) CrumbType() string { return TypeToolInputEnd }

// MarshalJSON writes the wire form with "type" first.
func (c ToolInputEnd) MarshalJSON() ([]byte, error) {
	type plain ToolInputEnd
	return marshalTagged("type", TypeToolInputEnd, plain(c))
}

// CrumbType implements Crumb.
func (*HumanRequired) CrumbType() string { return TypeHumanRequired }

// MarshalJSON writes the wire form with "type" first.
func (c HumanRequired) MarshalJSON() ([]byte, error) {
	type plain HumanRequired
	return marshalTagged("type", TypeHumanRequired, plain(c))
}

func (c *HumanRequired) rawPayload() []*any { return []*any{&c.Schema} }

// CrumbType implements Crumb.
func (*HumanResumed) CrumbType() string { return TypeHumanResumed }

// MarshalJSON writes the wire form with "type" first.
func (c HumanResumed) MarshalJSON() ([]byte, error) {
	type plain HumanResumed
	return marshalTagged("type", TypeHumanResumed, plain(c))
}

func (c *HumanResumed) rawPayload() []*any { return []*any{&c.Response} }

// CrumbType implements Crumb.
func (*SubagentRunStart) CrumbType() string { return TypeSubagentRunStart }

// MarshalJSON writes the wire form with "type" first.
func (c SubagentRunStart) MarshalJSON() ([]byte, error) {
	type plain SubagentRunStart
	return marshalTagged("type", TypeSubagentRunStart, plain(c))
}

// CrumbType implements Crumb.
func (*SubagentRunEnd) CrumbType() string { return TypeSubagentRunEnd }

// MarshalJSON writes the wire form with "type" first.
func (c SubagentRunEnd) MarshalJSON() ([]byte, error) {
	type plain SubagentRunEnd
	return marshalTagged("type", TypeSubagentRunEnd, plain(c))
}

func (c *SubagentRunEnd) rawPayload() []*any { return []*any{&c.Output} }

// CrumbType implements Crumb.
func (*PipelineStepStart) CrumbType() string { return TypePipelineStepStart }

// MarshalJSON writes the wire form with "type" first.
func (c PipelineStepStart) MarshalJSON() ([]byte, error) {
	type plain PipelineStepStart
	return marshalTagged("type", TypePipelineStepStart, plain(c))
}

// CrumbType implements Crumb.
func (*PipelineStepEnd) CrumbType() string { return TypePipelineStepEnd }

// MarshalJSON writes the wire form with "type" first.
func (c PipelineStepEnd) MarshalJSON() ([]byte, error) {
	type plain PipelineStepEnd
	return marshalTagged("type", TypePipelineStepEnd, plain(c))
}

func (c *PipelineStepEnd) rawPayload() []*any { return []*any{&c.Output} }

// CrumbType implements Crumb.
func (*LoopStart) CrumbType() string { return TypeLoopStart }

// MarshalJSON writes the wire form with "type" first.
func (c LoopStart) MarshalJSON() ([]byte, error) {
	type plain LoopStart
	return marshalTagged("type", TypeLoopStart, plain(c))
}

// CrumbType implements Crumb.
func (*LoopIterationStart) CrumbType() string { return TypeLoopIterationStart }

// MarshalJSON writes the wire form with "type" first.
func (c LoopIterationStart) MarshalJSON() ([]byte, error) {
	type plain LoopIterationStart
	return marshalTagged("type", TypeLoopIterationStart, plain(c))
}

// CrumbType implements Crumb.
func (*LoopIterationEnd) CrumbType() string { return TypeLoopIterationEnd }

// MarshalJSON writes the wire form with "type" first.
func (c LoopIterationEnd) MarshalJSON() ([]byte, error) {
	type plain LoopIterationEnd
	return marshalTagged("type", TypeLoopIterationEnd, plain(c))
}

func (c *LoopIterationEnd) rawPayload() []*any { return []*any{&c.Output} }

// CrumbType implements Crumb.
func (*LoopEnd) CrumbType() string { return TypeLoopEnd }

// MarshalJSON writes the wire form with "type" first.
func (c LoopEnd) MarshalJSON() ([]byte, error) {
	type plain LoopEnd
	return marshalTagged("type", TypeLoopEnd, plain(c))
}

func (c *LoopEnd) rawPayload() []*any { return []*any{&c.Result} }

// CrumbType implements Crumb.
func (*TaskStart) CrumbType() string { return TypeTaskStart }

// MarshalJSON writes the wire form with "type" first.
func (c TaskStart) MarshalJSON() ([]byte, error) {
	type plain TaskStart
	return marshalTagged("type", TypeTaskStart, plain(c))
}

// CrumbType implements Crumb.
func (*TaskEnd) CrumbType() string { return TypeTaskEnd }

// MarshalJSON writes the wire form with "type" first.
func (c TaskEnd) MarshalJSON() ([]byte, error) {
	type plain TaskEnd
	return marshalTagged("type", TypeTaskEnd, plain(c))
}

// CrumbType implements Crumb.
func (*AgentError) CrumbType() string { return TypeAgentError }

// MarshalJSON writes the wire form with "type" first.
func (c AgentError) MarshalJSON() ([]byte, error) {
	type plain AgentError
	return marshalTagged("type", TypeAgentError, plain(c))
}
