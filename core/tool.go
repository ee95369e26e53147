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
	// Emit hands a crumb to the run's stream, numbered by the choke point
	// like the run's own. The engine's built-in tools use it for task, loop
	// and delegation crumbs; it is nil outside a run.
	Emit func(Crumb)
}
