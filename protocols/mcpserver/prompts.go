package mcpserver

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

// agentPrompt declares an exposed agent (or agent and skill) as an MCP
// prompt of the same name as its tool: the agent's instructions (and the
// skill's), then the input built from the arguments. Arguments come from
// the input schema: an object's top-level properties (required as the
// schema says), else one required "input".
func (p *Plugin) agentPrompt(a *core.Agent, name string, skill *core.Skill) (*mcp.Prompt, mcp.PromptHandler) {
	props, required := schemaProperties(a.InputSchema)
	var args []*mcp.PromptArgument
	if props == nil {
		args = []*mcp.PromptArgument{{Name: "input", Description: "The agent's input", Required: true}}
	} else {
		for _, k := range slices.Sorted(maps.Keys(props)) {
			d, _ := props[k]["description"].(string)
			args = append(args, &mcp.PromptArgument{Name: k, Description: d, Required: slices.Contains(required, k)})
		}
	}
	desc := cmpOr(a.Description, "The bread agent "+a.ID+".")
	instructions := a.Prompt
	if skill != nil {
		desc = cmpOr(skill.Description, desc)
		instructions = strings.TrimSpace(instructions + "\n\n" + skill.Instructions)
	}
	prompt := &mcp.Prompt{Name: name, Description: desc, Arguments: args}
	return prompt, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		var input string
		if props == nil {
			input = req.Params.Arguments["input"]
		} else {
			obj := map[string]any{}
			for k, v := range req.Params.Arguments {
				obj[k] = v
				if t := typeOf(props[k]); t != "" && t != "string" {
					var x any
					if json.Unmarshal([]byte(v), &x) == nil {
						obj[k] = x // a number, boolean, object or list given as JSON
					}
				}
			}
			b, _ := json.Marshal(obj)
			input = string(b)
		}
		var msgs []*mcp.PromptMessage
		if instructions != "" {
			msgs = append(msgs, &mcp.PromptMessage{Role: "user", Content: &mcp.TextContent{Text: instructions}})
		}
		msgs = append(msgs, &mcp.PromptMessage{Role: "user", Content: &mcp.TextContent{Text: input}})
		return &mcp.GetPromptResult{Description: desc, Messages: msgs}, nil
	}
}

// schemaProperties reads an object schema's properties and required list;
// nil properties when the schema is not an object with properties.
func schemaProperties(s json.RawMessage) (map[string]map[string]any, []string) {
	var m struct {
		Type       any                       `json:"type"`
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if len(s) == 0 || json.Unmarshal(s, &m) != nil || m.Type != "object" || len(m.Properties) == 0 {
		return nil, nil
	}
	return m.Properties, m.Required
}
