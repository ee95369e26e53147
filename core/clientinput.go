package core

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
)

// ClientInput is what the client that starts or resumes a run gives it
// besides its input: the things AG-UI's RunAgentInput carries (context,
// forwardedProps, tools, state), named here without AG-UI so any ingress
// can pass them. The zero value gives nothing.
//
// The engine hands it to the run as follows: Context is a section of the
// model's system prompt; Tools are offered to the model (ScopeClient) and
// a call of one suspends the run until the client answers it; State, when
// set, replaces the session's state document (SessionStateStore) as the
// run starts and turns on the core_state_update tool; everything, and
// ForwardedProps alone, reaches tools, hooks and plugins through the run's
// context (ClientInputFrom).
type ClientInput struct {
	// Context is what the client says the agent should know for this run,
	// in its order (a page the user is on, a selection).
	Context []ContextEntry `json:"context,omitempty"`
	// ForwardedProps is the client's opaque JSON for tools, hooks and
	// plugins; the model never sees it.
	ForwardedProps json.RawMessage `json:"forwardedProps,omitempty"`
	// Tools are the client's own tools (frontend tools): offered to the
	// model under their own names, answered by the client.
	Tools []ClientTool `json:"tools,omitempty"`
	// State, when set (JSON null counts as unset), replaces the session's
	// state document before the run goes on.
	State json.RawMessage `json:"state,omitempty"`
}

// ContextEntry is one piece of client context: what it is, and its value.
type ContextEntry struct {
	Description string `json:"description"`
	Value       string `json:"value"`
}

// ClientTool is a tool the client executes: the model sees Name,
// Description and Parameters (a JSON Schema of its arguments); a call
// suspends the run on a checkpoint whose answer is the tool's result.
type ClientTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// HasState reports whether ci carries a state document.
func (ci ClientInput) HasState() bool {
	return len(ci.State) > 0 && string(ci.State) != "null"
}

type clientInputKey struct{}

// WithClientInput returns ctx carrying ci; the engine sets it on every run
// it executes, so tools, hooks and plugins read it with ClientInputFrom.
func WithClientInput(ctx context.Context, ci ClientInput) context.Context {
	return context.WithValue(ctx, clientInputKey{}, ci)
}

// ClientInputFrom returns the ClientInput of the run ctx belongs to, the
// zero value outside a run or for a run given none.
func ClientInputFrom(ctx context.Context) ClientInput {
	ci, _ := ctx.Value(clientInputKey{}).(ClientInput)
	return ci
}

// MaxClientTools bounds the tools one ClientInput may declare.
const MaxClientTools = 128

// clientToolName is what model providers accept as a function name.
var clientToolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Validate checks what the engine relies on: tool names a model provider
// accepts ([A-Za-z0-9_-], 1 to 64), none twice, at most MaxClientTools,
// parameters that are a JSON object, and forwarded properties and state
// that are JSON. A refusal is VALIDATION_ERROR naming the field.
func (ci ClientInput) Validate() error {
	if len(ci.Tools) > MaxClientTools {
		return Errorf(CodeValidationError, "at most %d client tools; got %d", MaxClientTools, len(ci.Tools))
	}
	seen := make(map[string]bool, len(ci.Tools))
	for i, t := range ci.Tools {
		if !clientToolName.MatchString(t.Name) {
			return Errorf(CodeValidationError, "tools[%d].name %s must be 1 to 64 of A-Z, a-z, 0-9, _ and -", i, quoteTruncated(t.Name))
		}
		if seen[t.Name] {
			return Errorf(CodeValidationError, "tools[%d].name %s is declared twice", i, quoteTruncated(t.Name))
		}
		seen[t.Name] = true
		if p := bytes.TrimSpace(t.Parameters); len(p) > 0 && (p[0] != '{' || !json.Valid(p)) {
			return Errorf(CodeValidationError, "tools[%d].parameters must be a JSON Schema object", i)
		}
	}
	if len(ci.ForwardedProps) > 0 && !json.Valid(ci.ForwardedProps) {
		return Errorf(CodeValidationError, "forwardedProps is not JSON")
	}
	if len(ci.State) > 0 && !json.Valid(ci.State) {
		return Errorf(CodeValidationError, "state is not JSON")
	}
	return nil
}

// IsZero reports whether ci gives nothing.
func (ci ClientInput) IsZero() bool {
	return len(ci.Context) == 0 && len(ci.ForwardedProps) == 0 && len(ci.Tools) == 0 && len(ci.State) == 0
}
