package engine

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/breadai/bread/core"
)

// boundTool is one tool as a run offers it to the model.
type boundTool struct {
	origin core.ToolOrigin
	leaf   string
	access core.Access
	tool   *core.Tool         // nil for human tools
	human  *core.HumanToolDef // set for human tools
	args   *compiledSchema
}

// suspends reports whether calling the tool suspends the run.
func (b *boundTool) suspends() bool { return b.human != nil || b.access == core.Gated }

// toolset is everything a run can call, keyed by model-facing name.
type toolset struct {
	byLeaf map[string]*boundTool
	specs  []core.ToolSpec
}

// toolSource is a tool before permissions apply.
type toolSource struct {
	origin core.ToolOrigin
	tool   *core.Tool
	human  *core.HumanToolDef
}

// assembleTools collects every tool source of a run (the agent's own tools,
// human tools, global plugin tools, per-agent plugin tools, and the built-ins
// its configuration turns on), applies permissions, and checks that no two
// tools share a model-facing name.
func (r *run) assembleTools(ctx context.Context) (*toolset, error) {
	a := r.agent
	var sources []toolSource
	for i := range a.Tools {
		sources = append(sources, toolSource{origin: core.ToolOrigin{Scope: core.ScopeTool, Name: a.Tools[i].Name}, tool: &a.Tools[i]})
	}
	for i := range a.HumanTools {
		sources = append(sources, toolSource{origin: core.ToolOrigin{Scope: core.ScopeHuman, Name: a.HumanTools[i].Name}, human: &a.HumanTools[i]})
	}
	for i := range r.in.pluginTools {
		pt := &r.in.pluginTools[i]
		sources = append(sources, toolSource{origin: core.ToolOrigin{Scope: core.ScopePlugin, Sub: pt.plugin, Name: pt.tool.Name}, tool: &pt.tool})
	}
	for _, pr := range r.in.toolResolvers {
		tools, err := pr.resolver.ResolveAgentTools(ctx, a.Agent)
		if err != nil {
			return nil, core.Errorf(core.CodeToolError, "plugin %s could not resolve tools for agent %s: %w", pr.plugin, a.ID, err)
		}
		for i := range tools {
			t := &tools[i]
			if err := checkTool(t); err != nil {
				return nil, core.Errorf(core.CodeInvalidName, "plugin %s: %w", pr.plugin, err)
			}
			sources = append(sources, toolSource{origin: core.ToolOrigin{Scope: core.ScopePlugin, Sub: pr.plugin, Name: t.Name}, tool: t})
		}
	}
	builtins, err := r.builtinSources(ctx)
	if err != nil {
		return nil, err
	}
	sources = append(sources, builtins...)
	sources = append(sources, r.clientSources()...)

	ts := &toolset{}
	if len(sources) > 0 { // an agent without tools reads an empty (nil) index
		ts.byLeaf = make(map[string]*boundTool, len(sources))
	}
	for _, s := range sources {
		access := a.perms.Decide(s.origin)
		if s.origin.Scope == core.ScopeCore && s.origin.Name == stateToolLeaf {
			// The client turned it on by giving a state, and it changes
			// only that state: like a client tool, no selector gates it.
			access = core.Allowed
		}
		if access == core.Denied {
			continue
		}
		leaf := core.LeafName(s.origin)
		if _, dup := ts.byLeaf[leaf]; dup {
			return nil, collision(leaf)
		}
		bt := &boundTool{origin: s.origin, leaf: leaf, access: access, tool: s.tool, human: s.human}
		spec := core.ToolSpec{Name: leaf}
		var err error
		if s.human != nil {
			spec.Description = s.human.Description
			if spec.Description == "" {
				spec.Description = "Ask a human: " + s.human.Name
			}
			spec.InputSchema = s.human.Schema
			bt.args, err = r.in.schemas.compile("human tool "+s.human.Name+" schema", s.human.Schema)
		} else {
			spec.Description = s.tool.Description
			spec.InputSchema = s.tool.InputSchema
			bt.args, err = r.in.schemas.compile("tool "+s.tool.Name+" inputSchema", s.tool.InputSchema)
		}
		if err != nil {
			return nil, err
		}
		if spec.InputSchema == nil {
			spec.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		ts.byLeaf[leaf] = bt
		ts.specs = append(ts.specs, spec)
	}
	slices.SortFunc(ts.specs, func(x, y core.ToolSpec) int { return strings.Compare(x.Name, y.Name) })
	return ts, nil
}
