package core

// StepType discriminates pipeline steps.
type StepType string

// The pipeline step types.
const (
	// StepAgent runs one agent on the previous step's output.
	StepAgent StepType = "agent"
	// StepParallel runs its steps concurrently on the same input; the output
	// is the list of their outputs in step order.
	StepParallel StepType = "parallel"
	// StepMap runs one agent once per item of an array input; the output is
	// the list of outputs in item order.
	StepMap StepType = "map"
	// StepRoute asks a named decider which agent runs next.
	StepRoute StepType = "route"
)

// PipelineStep is one step of a pipeline, as declared in Config.Pipelines or
// composed by a loop.
type PipelineStep struct {
	Type    StepType       `json:"type"`
	AgentID string         `json:"agentId,omitempty"`
	Skill   string         `json:"skill,omitempty"`
	Steps   []PipelineStep `json:"steps,omitempty"`
	// Decider, Prompt and Routes configure a route step: the named decider
	// picks one of the route names and that route's agent runs.
	Decider string            `json:"decider,omitempty"`
	Prompt  string            `json:"prompt,omitempty"`
	Routes  map[string]string `json:"routes,omitempty"`
}
