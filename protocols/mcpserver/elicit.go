package mcpserver

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

// question is a checkpoint asked as an MCP elicitation (form mode): the
// message and flat schema the host shows, and how its answer becomes the
// checkpoint's response.
type question struct {
	params *mcp.ElicitParams
	// approval: the answer is {"approved": bool, "reason"?: string}.
	approval bool
	// wrapped: the answer schema is not an object, so the form asks for
	// one property, "answer", and the response is its value.
	wrapped bool
}

// answerKey is the one property of a wrapped (non-object) answer schema.
const answerKey = "answer"

// approvalSchema asks an approval as a yes/no and an optional reason: the
// shape of bread's approval response.
var approvalSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approved": map[string]any{"type": "boolean", "title": "Approve", "description": "Allow this call", "default": false},
		"reason":   map[string]any{"type": "string", "title": "Reason", "description": "Why (optional)"},
	},
	"required": []string{"approved"},
}

// ask turns a human:required into an elicitation, or reports why it cannot
// be one: an input whose answer schema MCP's flat form schemas cannot
// express (nested objects, arrays of anything but enum strings, composed
// schemas) stays a suspended run, answered over bread's own API.
func (p *Plugin) ask(h *core.HumanRequired) (question, error) {
	def, isInput := p.humanTool(h.AgentID, h.ToolName)
	if h.Kind == core.HumanApproval || (h.Kind == "" && !isInput) {
		msg := fmt.Sprintf("The agent %s wants to call %s", h.AgentID, h.ToolName)
		if args := compactJSON(h.Schema, 2000); args != "" && args != "{}" && args != "null" {
			msg += " with " + args
		}
		return question{approval: true, params: &mcp.ElicitParams{Mode: "form", Message: msg + ". Approve?", RequestedSchema: approvalSchema}}, nil
	}
	if !isInput {
		return question{}, fmt.Errorf("the agent %s has no human tool %s", h.AgentID, h.ToolName)
	}
	var schema map[string]any
	if len(def.Schema) > 0 {
		if err := json.Unmarshal(def.Schema, &schema); err != nil {
			return question{}, fmt.Errorf("the answer schema of %s is not a JSON object: %w", h.ToolName, err)
		}
	}
	q := question{}
	defaults := decoded(h.Schema) // the model's request follows the answer schema
	if typeOf(schema) == "object" {
		props, _ := schema["properties"].(map[string]any)
		if len(props) == 0 {
			return question{}, fmt.Errorf("the answer schema of %s is an object without properties", h.ToolName)
		}
		flat, err := flatProperties(props, asMap(defaults))
		if err != nil {
			return question{}, fmt.Errorf("the answer schema of %s: %w", h.ToolName, err)
		}
		out := map[string]any{"type": "object", "properties": flat}
		if req := requiredOf(schema, flat); len(req) > 0 {
			out["required"] = req
		}
		q.params = &mcp.ElicitParams{Mode: "form", RequestedSchema: out}
	} else {
		prop, err := flatProperty(schema, defaults)
		if err != nil {
			return question{}, fmt.Errorf("the answer schema of %s: %w", h.ToolName, err)
		}
		if _, ok := prop["title"]; !ok {
			prop["title"] = "Answer"
		}
		q.wrapped = true
		q.params = &mcp.ElicitParams{Mode: "form", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{answerKey: prop}, "required": []string{answerKey}}}
	}
	q.params.Message = cmpOr(cmpOr(h.Prompt, def.Prompt), cmpOr(def.Description, fmt.Sprintf("The agent %s asks for input (%s).", h.AgentID, h.ToolName)))
	return q, nil
}

// response turns an accepted elicitation into the checkpoint's response.
func (q question) response(content map[string]any) any {
	if q.approval {
		ok, _ := content["approved"].(bool)
		r := map[string]any{"approved": ok}
		if why, _ := content["reason"].(string); why != "" {
			r["reason"] = why
		}
		return r
	}
	if q.wrapped {
		return content[answerKey]
	}
	return content
}

// declined is the response to an approval the host's user declined.
func declined() any {
	return map[string]any{"approved": false, "reason": "declined by the user of the MCP client"}
}

// humanTool finds the human tool whose leaf name a checkpoint carries.
func (p *Plugin) humanTool(agentID, leaf string) (core.HumanToolDef, bool) {
	a, ok := p.rt.Agent(agentID)
	if !ok {
		return core.HumanToolDef{}, false
	}
	for _, h := range a.HumanTools {
		if core.LeafName(core.ToolOrigin{Scope: core.ScopeHuman, Name: h.Name}) == leaf || h.Name == leaf {
			return h, true
		}
	}
	return core.HumanToolDef{}, false
}

// The keywords a form property may carry (MCP's PrimitiveSchemaDefinition);
// the rest of a JSON Schema is dropped, and the engine still checks the
// answer against the full schema on resume.
var (
	commonKeys = []string{"type", "title", "description", "default"}
	stringKeys = []string{"minLength", "maxLength", "format", "enum", "enumNames", "oneOf"}
	numberKeys = []string{"minimum", "maximum"}
	arrayKeys  = []string{"items", "minItems", "maxItems"}
	formats    = []string{"email", "uri", "date", "date-time"}
)

func flatProperties(props map[string]any, defaults map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(props))
	for _, name := range slices.Sorted(maps.Keys(props)) {
		s, _ := props[name].(map[string]any)
		prop, err := flatProperty(s, defaults[name])
		if err != nil {
			return nil, fmt.Errorf("property %s: %w", name, err)
		}
		out[name] = prop
	}
	return out, nil
}

// flatProperty is one primitive form property, or an error saying why a
// schema is not one. def, when it fits, becomes the default.
func flatProperty(s map[string]any, def any) (map[string]any, error) {
	t := typeOf(s)
	if t == "" {
		if _, ok := s["enum"]; ok {
			t = "string"
		}
	}
	keys := commonKeys
	switch t {
	case "string":
		keys = append(slices.Clone(keys), stringKeys...)
		if f, ok := s["format"].(string); ok && !slices.Contains(formats, f) {
			s = maps.Clone(s)
			delete(s, "format")
		}
		if e, ok := s["enum"].([]any); ok && slices.ContainsFunc(e, func(v any) bool { _, ok := v.(string); return !ok }) {
			return nil, fmt.Errorf("an enum of values other than strings")
		}
	case "number", "integer":
		keys = append(slices.Clone(keys), numberKeys...)
	case "boolean":
	case "array":
		items, _ := s["items"].(map[string]any)
		if _, ok := items["enum"]; !ok {
			if _, ok := items["anyOf"]; !ok {
				return nil, fmt.Errorf("an array of anything but enum strings")
			}
		}
		keys = append(slices.Clone(keys), arrayKeys...)
	case "":
		return nil, fmt.Errorf("no primitive type")
	default:
		return nil, fmt.Errorf("type %s (a form holds strings, numbers, integers, booleans and enum lists)", t)
	}
	out := map[string]any{"type": t}
	for _, k := range keys {
		if v, ok := s[k]; ok && k != "type" {
			out[k] = v
		}
	}
	if def != nil && fits(t, def) {
		out["default"] = def
	}
	return out, nil
}

// fits reports whether a model-proposed value can stand as the default of a
// property of type t.
func fits(t string, v any) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case "boolean":
		_, ok := v.(bool)
		return ok
	}
	return false
}

// typeOf is a schema's type: a string, or the one non-null type of a list.
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		var one string
		for _, x := range t {
			if x, ok := x.(string); ok && x != "null" {
				if one != "" {
					return "mixed"
				}
				one = x
			}
		}
		return one
	}
	return ""
}

func requiredOf(s map[string]any, props map[string]any) []string {
	list, _ := s["required"].([]any)
	var out []string
	for _, r := range list {
		if name, ok := r.(string); ok {
			if _, ok := props[name]; ok {
				out = append(out, name)
			}
		}
	}
	return out
}

// decoded is v as encoding/json decodes it (maps, []any, float64, ...).
func decoded(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// asMap reads a value (a map or JSON) as an object; nil when it is not one.
func asMap(v any) map[string]any {
	switch m := v.(type) {
	case map[string]any:
		return m
	case json.RawMessage:
		var out map[string]any
		_ = json.Unmarshal(m, &out)
		return out
	case []byte:
		return asMap(json.RawMessage(m))
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return asMap(json.RawMessage(b))
}

// compactJSON renders v as JSON of at most n bytes.
func compactJSON(v any, n int) string {
	var b []byte
	switch r := v.(type) {
	case json.RawMessage:
		b = r
	default:
		b, _ = json.Marshal(v)
	}
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
