package core

import (
	"context"
	"encoding/json"
	"iter"
)

// Tool is a capability a model can call. Build one with DefineTool (typed,
// schema derived from Go types) or fill the struct directly (JSON Schema and
// raw arguments, for tools loaded from files).
//
// Exactly one of Execute and ExecuteStream is set. A streaming tool yields
// intermediate values, each a tool:result:partial crumb; the last value
// yielded is the result.
type Tool struct {
	Name        string
	Description string
	// InputSchema is the JSON Schema of the arguments.
	InputSchema json.RawMessage
	// OutputSchema optionally describes the result.
	OutputSchema json.RawMessage
	// Credentials names the secrets this tool may read; reading any other is
	// CREDENTIAL_NOT_DECLARED.
	Credentials []string
	// CredentialProvider overrides Config.Credentials for this tool.
	CredentialProvider CredentialProvider
	Hooks              Hooks
	ErrorHandling      ErrorHandling

	Execute       func(ctx context.Context, args json.RawMessage, tc ToolContext) (any, error)
	ExecuteStream func(ctx context.Context, args json.RawMessage, tc ToolContext) iter.Seq2[any, error]
}

// ToolContext is what a running tool knows about its run.
type ToolContext struct {
	AgentID   string
	RunID     string
	SessionID string
	// ToolCallID is the model's id for this call.
	ToolCallID string
	// IdempotencyKey is the same every time this call executes: an approved
	// tool runs at least once across a crash (a resume whose process dies
	// is retried once its claim lapses), so a tool with a side effect can
	// use the key to make it happen exactly once. It is
	// "<checkpointId>:<toolCallId>" for a call a human approved and
	// "<runId>:<toolCallId>" otherwise.
	IdempotencyKey string
	// Credentials resolves the secrets the tool declared.
	Credentials CredentialProvider
	// Blobs is the engine's blob store (Config.BlobStore); nil, whose
	// every call answers BLOB_STORE_NOT_CONFIGURED, when there is none.
	Blobs *Blobs
	// Emitter is the door through which the tool adds crumbs to its run's
	// stream; nil outside a run. Call tc.Emit rather than it.
	Emitter ToolEmitter
	// Answer is the human's answer (JSON) when this execution resumes a
	// call that asked a question (see ToolQuestion); nil otherwise.
	Answer json.RawMessage
}

// ToolEmitter is what a tool emits through: the engine gives each tool call
// its own, checked door rather than the run's stream.
//
// The engine's door admits the crumb types a tool may add to its run:
// file:generated (a file the tool made) and tool:result:partial (progress
// of a tool that is not a streaming one). Every other type is the
// engine's own (the run's start and end, the model's text, the call's
// tool:call and tool:result, compositions, humans): it answers
// TOOL_EMIT_REFUSED and the crumb goes nowhere. An admitted crumb is
// stamped with the tool's run, agent and session (a tool:result:partial
// also with its call's id and tool name), so a tool cannot write into
// another run; it belongs to the engine from then on (see Crumb).
//
// The door shuts when the tool returns: a crumb emitted later (by a
// goroutine that outlived the tool) is dropped and logged, and Emit
// answers TOOL_EMIT_REFUSED. Emit may be called from any goroutine.
type ToolEmitter interface {
	Emit(c Crumb) error
}

// Emit hands c to the run's stream through tc.Emitter (see ToolEmitter).
// Outside a run, where there is no stream, it answers TOOL_EMIT_REFUSED.
func (tc ToolContext) Emit(c Crumb) error {
	if tc.Emitter == nil {
		return &BreadError{Code: CodeToolEmitRefused, Message: "this tool runs outside a run: there is no stream to emit to"}
	}
	return tc.Emitter.Emit(c)
}
