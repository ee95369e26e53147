package core

import "encoding/json"

// Agent defines an agent: its model, prompt, schemas, output format, tools
// and how it is allowed to use them. Build one with DefineAgent (typed: the
// schemas derive from Go types) or fill the struct directly (the loader does,
// from an agent folder, with JSON Schemas).
type Agent struct {
	// ID names the agent (see ValidID).
	ID          string
	Description string
	Model       ModelRef
	// Providers is checked before Config.Providers when resolving Model.
	Providers ProviderRegistry
	// Prompt is the system prompt.
	Prompt string
	// InputSchema and OutputSchema are JSON Schemas; nil accepts anything.
	// Input is validated before a run starts; a json output is validated
	// before the run ends.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Output       OutputFormat
	// Permissions gate the agent's tools; see Permissions.
	Permissions Permissions
	// MaxSteps caps model calls per run (default 20).
	MaxSteps int
	// Tools are the agent's own tools (tool_<name> to the model).
	Tools []Tool
	// HumanTools suspend the run to ask a human (human_<name>).
	HumanTools []HumanToolDef
	// Skills are instruction bundles the caller can activate for a run
	// (RunOptions.Skill) or the model can load with core_load_skill.
	Skills []Skill
	// Tasks names one-shot tasks (Config.Tasks) offered as task_<name> tools.
	Tasks []string
	// Knowledge turns on the core_kg_* tools (and, with AutoInject, the
	// knowledge context in the prompt) when the store is a KnowledgeStore.
	Knowledge *KnowledgeConfig
	// Documents turns on the core_doc_* tools when the store is a
	// DocumentStore.
	Documents *DocumentConfig
	// Supervisor turns the agent into a supervisor: core_delegate and a
	// roster section in the prompt.
	Supervisor *SupervisorConfig
	// Loop lets the agent run agent-driven loops over a pool of agents.
	Loop *LoopConfig
	// Plugins holds per-plugin configuration keyed by plugin name; core
	// never reads it, an AgentToolsResolver does.
	Plugins map[string]any
	// ErrorHandling bounds the retries of a failing run.
	ErrorHandling ErrorHandling
	// Hooks are the agent-scope hooks.
	Hooks Hooks
	// Concurrency decides what happens to a run that arrives for a session
	// on which a run of this instance is already running; empty is
	// Config.SessionConcurrency, then ConcurrencyReject.
	Concurrency ConcurrencyPolicy
	// OnLost decides what becomes of this agent's background run whose
	// process died mid-run; the zero value fails it with RUN_LOST.
	OnLost LostPolicy

	// CheckInput, when set, validates a run's input beyond InputSchema
	// (typed.DefineAgent sets it from the Go type and its validate tags).
	CheckInput func(input any) error
	// DecodeOutput, when set, turns a json output into its Go value
	// (typed.DefineAgent sets it).
	DecodeOutput func(raw json.RawMessage) (any, error)
}

// OutputFormat says how a run's text becomes its output.
type OutputFormat struct {
	// Format is "text" (the default), "markdown", "json", or the name of a
	// custom format.
	Format string `json:"format,omitempty"`
	// Parse turns the streamed text of a custom format into the output.
	// A custom format keeps tool access; json does not.
	Parse func(text string) (any, error) `json:"-"`
}

// The built-in output formats.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
)

// HumanToolDef is a tool a model calls to ask a human. Calling it suspends
// the run; the human's answer, validated against Schema, becomes the tool
// result when the run is resumed.
type HumanToolDef struct {
	Name        string
	Description string
	// Prompt is shown to the human with the request.
	Prompt string
	// Schema is the JSON Schema of the answer (and of the model's request).
	Schema json.RawMessage
}

// HumanTool returns a human tool named name whose answer follows schema.
func HumanTool(name string, schema json.RawMessage) HumanToolDef {
	return HumanToolDef{Name: name, Schema: schema}
}
