package llm

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/breadai/bread/core"
)

// Helpers the adapters share to read bread's provider-neutral request.

// schemaMap decodes a JSON Schema for SDKs that want a map. An empty schema
// is an empty object schema.
func schemaMap(raw json.RawMessage) (map[string]any, error) {
	if len(strings.TrimSpace(string(raw))) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// toolResultText renders a tool result for APIs that take text: a JSON
// string is unquoted, anything else is sent as its JSON.
func toolResultText(out json.RawMessage) string {
	trimmed := strings.TrimSpace(string(out))
	if trimmed == "" {
		return ""
	}
	if trimmed[0] == '"' {
		var s string
		if json.Unmarshal(out, &s) == nil {
			return s
		}
	}
	return trimmed
}

// dataURL returns the part's content as a data: URL, or its URL.
func dataURL(p core.Part) string {
	if len(p.Data) == 0 && p.URL != "" {
		return p.URL
	}
	mt := p.MediaType
	if mt == "" {
		mt = "application/octet-stream"
	}
	return "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(p.Data)
}

func isImage(mediaType string) bool { return strings.HasPrefix(mediaType, "image/") }

// outputName is the structured output's name, which several APIs require.
func outputName(o *core.OutputSpec) string {
	if o.Name != "" {
		return o.Name
	}
	return "output"
}

// invalidRequest is the error for a request the adapter cannot express.
func invalidRequest(provider, format string, args ...any) *core.BreadError {
	return configError(core.CodeValidationError, provider, format, args...)
}
