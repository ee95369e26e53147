package core

import (
	"encoding/json"
)

// Task is a one-shot, stateless structured model call: no tool loop, no
// session, no HITL. An agent lists tasks by name (Agent.Tasks) and gets each
// as a task_<name> tool; Instance.RunTask runs one standalone.
//
// The model answers Instructions about the input with JSON matching
// OutputSchema, through its structured output. Hooks have the task scope:
// BeforeRun may reshape the input (load a document) or short-circuit,
// AfterRun may reshape the output (persist entities), OnError may recover
// or retry within ErrorHandling.Retry.
type Task struct {
	// Name is the task's id and tool name (lowercase snake_case).
	Name         string
	Description  string
	Model        ModelRef
	Providers    ProviderRegistry
	Instructions string
	// InputSchema validates the arguments; OutputSchema shapes the answer.
	InputSchema   json.RawMessage
	OutputSchema  json.RawMessage
	Hooks         Hooks
	ErrorHandling ErrorHandling

	// CheckInput and DecodeOutput, when set, validate the arguments and
	// decode the answer as Go values (typed.DefineTask sets them).
	CheckInput   func(args any) error
	DecodeOutput func(raw json.RawMessage) (any, error)
}
