package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

// exposedPrompt is one MCP prompt before registration.
type exposedPrompt struct {
	prompt  *mcp.Prompt
	handler mcp.PromptHandler
}

// exposed is one MCP tool before registration.
type exposed struct {
	tool    *mcp.Tool
	handler mcp.ToolHandler
}

// exposedResource is one MCP resource (or resource template) before
// registration.
type exposedResource struct {
	resource *mcp.Resource
	template *mcp.ResourceTemplate
	handler  mcp.ResourceHandler
}

// build validates the options against the runtime and builds every tool,
// prompt and resource.
func (p *Plugin) build() (lists, error) {
	var (
		tools   []exposed
		prompts []exposedPrompt
		agents  []*core.Agent
	)
	p.promptEnums = map[string]map[string][]string{}
	addPrompt := func(a *core.Agent, name string, skill *core.Skill) {
		pr, h := p.agentPrompt(a, name, skill)
		prompts = append(prompts, exposedPrompt{pr, h})
		if e := enumsOf(a.InputSchema); e != nil {
			p.promptEnums[name] = e
		}
		if !slices.Contains(agents, a) {
			agents = append(agents, a)
		}
	}
	for _, id := range p.opts.Agents {
		a, err := p.agent(id)
		if err != nil {
			return lists{}, err
		}
		tools = append(tools, p.agentTool(a, id, "", "Run the bread agent "+id+describe(a.Description)))
		addPrompt(a, id, nil)
	}
	for _, ref := range p.opts.Skills {
		a, err := p.agent(ref.Agent)
		if err != nil {
			return lists{}, err
		}
		sk := slices.IndexFunc(a.Skills, func(s core.Skill) bool { return s.ID == ref.Skill })
		if sk < 0 {
			return lists{}, &core.BreadError{Code: core.CodeSkillNotFound, Message: "mcpserver: agent " + ref.Agent + " has no skill " + ref.Skill, Context: map[string]any{"agentId": ref.Agent, "skill": ref.Skill}}
		}
		tools = append(tools, p.agentTool(a, ref.Agent+"__"+ref.Skill, ref.Skill, "Run the bread agent "+ref.Agent+" with the skill "+ref.Skill+describe(a.Skills[sk].Description)))
		addPrompt(a, ref.Agent+"__"+ref.Skill, &a.Skills[sk])
	}
	if len(p.opts.Tasks) > 0 {
		lister, ok := p.rt.(interface{ Tasks() []*core.Task })
		if !ok {
			return lists{}, core.Errorf(core.CodeInvalidConfig, "mcpserver: the runtime does not list its tasks, so none can be exposed")
		}
		all := lister.Tasks()
		for _, name := range p.opts.Tasks {
			i := slices.IndexFunc(all, func(t *core.Task) bool { return t.Name == name })
			if i < 0 {
				return lists{}, &core.BreadError{Code: core.CodeTaskNotFound, Message: "mcpserver: task " + name + " not found", Context: map[string]any{"taskId": name}}
			}
			tools = append(tools, p.taskTool(all[i]))
		}
	}
	for _, ref := range p.opts.Tools {
		t, err := p.findTool(ref)
		if err != nil {
			return lists{}, err
		}
		name := t.Name
		if ref.Agent != "" {
			name = ref.Agent + "__" + t.Name
		}
		tools = append(tools, p.directTool(name, ref.Agent, t))
	}

	l := lists{tools: map[string]exposed{}, prompts: map[string]exposedPrompt{}}
	for _, pr := range prompts {
		l.prompts[pr.prompt.Name] = pr
	}
	l.resources, l.templates = p.resources(agents)
	for _, e := range tools {
		if _, ok := l.tools[e.tool.Name]; ok {
			return lists{}, &core.BreadError{Code: core.CodeToolNameCollision, Message: "mcpserver: two exposed tools are named " + e.tool.Name, Context: map[string]any{"name": e.tool.Name}}
		}
		l.tools[e.tool.Name] = e
	}
	return l, nil
}

// newTool declares an MCP tool; a nil output schema is left out, not sent
// as null.
func newTool(name, desc string, in, out json.RawMessage) *mcp.Tool {
	t := &mcp.Tool{Name: name, Description: desc, InputSchema: in}
	if out != nil {
		t.OutputSchema = out
	}
	return t
}

func describe(s string) string {
	if s == "" {
		return "."
	}
	return ": " + s
}

func (p *Plugin) agent(id string) (*core.Agent, error) {
	a, ok := p.rt.Agent(id)
	if !ok {
		return nil, &core.BreadError{Code: core.CodeAgentNotFound, Message: "mcpserver: agent " + id + " not found", Context: map[string]any{"agentId": id}}
	}
	return a, nil
}

// findTool resolves a ToolRef: an agent's own tool, or a global tool of a
// plugin.
func (p *Plugin) findTool(ref ToolRef) (core.Tool, error) {
	notFound := func() (core.Tool, error) {
		return core.Tool{}, &core.BreadError{Code: core.CodeToolNotFound, Message: "mcpserver: tool " + ref.Tool + " not found" + map[bool]string{true: " on agent " + ref.Agent, false: " among the plugins' tools"}[ref.Agent != ""], Context: map[string]any{"agentId": ref.Agent, "tool": ref.Tool}}
	}
	if ref.Agent != "" {
		a, err := p.agent(ref.Agent)
		if err != nil {
			return core.Tool{}, err
		}
		for _, t := range a.Tools {
			if t.Name == ref.Tool {
				return t, nil
			}
		}
		return notFound()
	}
	if pl, ok := p.rt.(interface{ Plugins() []core.BreadPlugin }); ok {
		for _, plugin := range pl.Plugins() {
			if tp, ok := plugin.(core.ToolsProvider); ok {
				for _, t := range tp.Tools() {
					if t.Name == ref.Tool {
						return t, nil
					}
				}
			}
		}
	}
	return notFound()
}

// agentTool exposes an agent (with a skill when skill is set).
func (p *Plugin) agentTool(a *core.Agent, name, skill, desc string) exposed {
	in, inWrapped := inputSchema(a.InputSchema, json.RawMessage(`{"type":"string"}`))
	out, outWrapped := outputSchema(agentOutputSchema(a))
	agentID := a.ID
	return exposed{
		tool: newTool(name, desc, in, out),
		handler: func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ctx, done := p.bind(withRequest(ctx, req), req)
			defer done()
			input, err := unwrapInput(req.Params.Arguments, inWrapped)
			if err != nil {
				return errorResult(err), nil
			}
			return p.runAgent(ctx, req, agentID, input, core.RunOptions{Skill: skill}, outWrapped), nil
		},
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// progressMessage names a crumb in a progress notification: its type, and
// for the crumbs a client follows a run by, what they are about. Every
// crumb type gets one (progress counts them all).
func progressMessage(c core.Crumb) string {
	msg := c.CrumbType()
	switch v := c.(type) {
	case *core.TextDelta:
		msg += ": " + v.Delta
	case *core.ToolCall:
		msg += " " + v.ToolName
	case *core.ToolResult:
		msg += " " + v.ToolName
	case *core.ToolError:
		msg += " " + v.ToolName
		if v.Error != nil {
			msg += ": " + v.Error.Code
		}
	case *core.SubagentRunStart:
		msg += " " + v.SubagentID
	case *core.HumanRequired:
		msg += " " + v.ToolName
	case *core.AgentError:
		if v.Error != nil {
			msg += ": " + v.Error.Code
		}
	}
	return msg
}

// taskTool exposes a task, run standalone (hooks and the audit record
// apply, no crumbs).
func (p *Plugin) taskTool(t *core.Task) exposed {
	in, inWrapped := inputSchema(t.InputSchema, json.RawMessage(`{"type":"object"}`))
	out, outWrapped := outputSchema(t.OutputSchema)
	name := t.Name
	desc := t.Description
	if desc == "" {
		desc = "Run the bread task " + name + "."
	}
	return exposed{
		tool: newTool(name, desc, in, out),
		handler: func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ctx, done := p.bind(withRequest(ctx, req), req)
			defer done()
			args, err := unwrapInput(req.Params.Arguments, inWrapped)
			if err != nil {
				return errorResult(err), nil
			}
			v, err := p.opts.RunTask(ctx, p.rt, name, args)
			if err != nil {
				return errorResult(err), nil
			}
			return valueResult(v, outWrapped), nil
		},
	}
}

// directTool exposes a tool called with no model in the loop: its
// credentials are scoped as in a run, but its hooks do not run and no crumbs
// are emitted (there is no run).
func (p *Plugin) directTool(name, agentID string, t core.Tool) exposed {
	in, inWrapped := inputSchema(t.InputSchema, json.RawMessage(`{"type":"object"}`))
	out, outWrapped := outputSchema(t.OutputSchema)
	var check *jsonschema.Resolved
	if len(t.InputSchema) > 0 {
		var s jsonschema.Schema
		if err := json.Unmarshal(t.InputSchema, &s); err == nil {
			check, err = s.Resolve(nil)
			if err != nil {
				p.log.Warn("bread: mcpserver cannot check the arguments of a tool against its schema", "tool", name, "reason", err.Error())
			}
		}
	}
	if agentID == "" {
		agentID = "mcp"
	}
	return exposed{
		tool: newTool(name, cmpOr(t.Description, name), in, out),
		handler: func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ctx, done := p.bind(withRequest(ctx, req), req)
			defer done()
			args, err := unwrapInput(req.Params.Arguments, inWrapped)
			if err != nil {
				return errorResult(err), nil
			}
			if check != nil {
				if err := check.Validate(args); err != nil {
					return errorResult(core.Errorf(core.CodeValidationError, "arguments of %s are invalid: %v", name, err)), nil
				}
			}
			raw, _ := json.Marshal(args)
			id := rand.Text()
			base := t.CredentialProvider
			if base == nil {
				if cp, ok := p.rt.(interface {
					Credentials() core.CredentialProvider
				}); ok {
					base = cp.Credentials()
				}
			}
			if base == nil {
				base = core.EnvCredentials()
			}
			tc := core.ToolContext{AgentID: agentID, RunID: id, SessionID: id, ToolCallID: id, Credentials: core.ScopedCredentials(base, t.Credentials), Blobs: p.rt.Blobs()}
			v, err := execute(ctx, t, raw, tc, progress(ctx, req))
			if err != nil {
				return errorResult(err), nil
			}
			return valueResult(v, outWrapped), nil
		},
	}
}

// execute runs a tool, draining a streaming one to its last value (each
// partial is a progress notification); a panic is a TOOL_ERROR.
func execute(ctx context.Context, t core.Tool, raw json.RawMessage, tc core.ToolContext, notify func(core.Crumb)) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = core.Errorf(core.CodeToolError, "tool %s panicked: %v", t.Name, r)
		}
	}()
	if t.Execute != nil {
		return t.Execute(ctx, raw, tc)
	}
	var seq iter.Seq2[any, error] = t.ExecuteStream(ctx, raw, tc)
	for x, err := range seq {
		if err != nil {
			return nil, err
		}
		v = x
		notify(&core.ToolResultPartial{ToolName: t.Name, Result: x})
	}
	return v, ctx.Err()
}

// valueResult shapes an output as a tool result: structured content (the
// value, or {output: value} when the schema was wrapped) and a text block. A
// tool written against the SDK may return MCP content itself
// (*mcp.CallToolResult, mcp.Content or []mcp.Content); it passes through.
func valueResult(v any, wrapped bool) *mcp.CallToolResult {
	switch c := v.(type) {
	case *mcp.CallToolResult:
		return c
	case mcp.Content:
		return &mcp.CallToolResult{Content: []mcp.Content{c}}
	case []mcp.Content:
		return &mcp.CallToolResult{Content: c}
	}
	text, ok := v.(string)
	var raw json.RawMessage
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			return errorResult(core.Errorf(core.CodeToolError, "the output is not JSON: %v", err))
		}
		raw, text = b, string(b)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	switch {
	case wrapped:
		res.StructuredContent = map[string]any{"output": v}
	case raw != nil && strings.HasPrefix(strings.TrimSpace(string(raw)), "{"):
		res.StructuredContent = raw
	}
	return res
}

// errorResult is a tool error the client (and its model) can read: the
// sanitized code and message, never a cause.
func errorResult(err error) *mcp.CallToolResult {
	ce := core.Sanitize(err)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: ce.Code + ": " + ce.Message}}}
}

// suspendedResult says the run waits for a human, naming the checkpoint to
// resume. It is an error result because the agent has no output yet.
func suspendedResult(agentID string, h *core.HumanRequired) *mcp.CallToolResult {
	what := "input"
	if h.Kind == core.HumanApproval {
		what = "approval"
	}
	text := fmt.Sprintf("The run %s of agent %s is waiting for a human's %s (tool %s)", h.RunID, agentID, what, h.ToolName)
	if h.Prompt != "" {
		text += ": " + h.Prompt
	}
	text += fmt.Sprintf(". Checkpoint %s: resume it with POST /resume/%s.", h.CheckpointID, h.CheckpointID)
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: text}},
		Meta:    mcp.Meta{"bread/checkpointId": h.CheckpointID, "bread/runId": h.RunID, "bread/kind": string(h.Kind), "bread/toolName": h.ToolName},
	}
}
