package core

import "encoding/json"

// Agent is the definition of an agent: its model, prompt, schemas, output
// format and tools. Build one with DefineAgent (typed) or fill the struct
// (the loader does, from an agent folder).
type Agent struct {
	// ID names the agent; it must satisfy the naming rule (see ValidName).
	ID    string
	Model ModelRef
	// Providers is checked before Config.Providers when resolving Model.
	Providers ProviderRegistry
	// Prompt is the system prompt.
	Prompt string
	// InputSchema and OutputSchema are JSON Schemas; nil accepts anything.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Output       OutputFormat
	Tools        []Tool
}

// OutputFormat says how a run's text becomes its output.
type OutputFormat struct {
	// Format is "text" (the default), "markdown", "json", or a custom name.
	Format string
	// Parse turns the streamed text of a custom format into the output.
	Parse func(text string) (any, error)
}

// The built-in output formats.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
)
