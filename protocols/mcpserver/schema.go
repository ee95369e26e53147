package mcpserver

import (
	"bytes"
	"encoding/json"

	"github.com/breadai/bread/core"
)

// isObjectSchema reports whether a JSON Schema is a top-level object schema,
// the only kind MCP accepts as a tool's input schema.
func isObjectSchema(s json.RawMessage) bool {
	var m struct {
		Type any `json:"type"`
	}
	if len(s) == 0 || json.Unmarshal(s, &m) != nil {
		return false
	}
	return m.Type == "object"
}

// wrap returns the object schema {key: s}, key required.
func wrap(key string, s json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(s)) == 0 {
		s = json.RawMessage(`{}`)
	}
	b, _ := json.Marshal(map[string]any{
		"type":                 "object",
		"properties":           map[string]json.RawMessage{key: s},
		"required":             []string{key},
		"additionalProperties": false,
	})
	return b
}

// inputSchema is the MCP input schema of a schema: an object schema as it
// is, anything else wrapped as {input: ...}. wrapped says which.
func inputSchema(s json.RawMessage, whenNil json.RawMessage) (schema json.RawMessage, wrapped bool) {
	if len(s) == 0 {
		s = whenNil
	}
	if isObjectSchema(s) {
		return s, false
	}
	return wrap("input", s), true
}

// outputSchema is the MCP output schema: an object schema as it is,
// anything else wrapped as {output: ...}; nil when there is none.
func outputSchema(s json.RawMessage) (schema json.RawMessage, wrapped bool) {
	if len(s) == 0 {
		return nil, false
	}
	if isObjectSchema(s) {
		return s, false
	}
	return wrap("output", s), true
}

// agentOutputSchema is an agent's output schema, or the schema its output
// format implies: a string for text and markdown, any value otherwise.
func agentOutputSchema(a *core.Agent) json.RawMessage {
	if len(a.OutputSchema) > 0 {
		return a.OutputSchema
	}
	switch a.Output.Format {
	case "", core.FormatText, core.FormatMarkdown:
		return json.RawMessage(`{"type":"string"}`)
	}
	return json.RawMessage(`{}`)
}

// unwrapInput recovers the value the agent, task or tool expects from the
// arguments an MCP client sent.
func unwrapInput(args json.RawMessage, wrapped bool) (any, error) {
	var v any = map[string]any{}
	if len(bytes.TrimSpace(args)) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &v); err != nil {
			return nil, core.Errorf(core.CodeValidationError, "the arguments are not JSON: %v", err)
		}
	}
	if !wrapped {
		return v, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, core.Errorf(core.CodeValidationError, "the arguments must be an object with an input field")
	}
	in, ok := m["input"]
	if !ok {
		return nil, core.Errorf(core.CodeValidationError, "the arguments need an input field")
	}
	return in, nil
}
