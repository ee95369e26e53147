package core

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// BuiltinToolNames are the names of the engine's core_* tools, as
// selectors name them ("core:delegate"). Which of them an agent has depends
// on its configuration (see CheckPermissionTargets).
var BuiltinToolNames = []string{
	"decide", "delegate", "doc_ingest", "doc_load", "doc_read", "doc_search",
	"finish_loop", "iterate_loop", "kg_forget", "kg_query", "kg_store", "load_skill", "start_loop",
}

// PermissionTargets is what, besides an agent's own configuration, decides
// which tools it can call.
type PermissionTargets struct {
	// Decisions is set when the instance has deciders: every agent then
	// has core_decide.
	Decisions bool
	// Plugins maps each configured plugin's name to the names of the tools
	// it may give the agent: exact names, or patterns with * for tools
	// known only at run time (an MCP client's "<server>__*"); "*" when the
	// plugin cannot say. Nil when the plugins are not known (a project
	// loader that does not build them): plugin selectors are then left
	// for the engine's check.
	Plugins map[string][]string
}

// CheckPermissionTargets refuses a permission selector of a, exact or glob,
// that matches no tool the agent can call: a misspelled "tool:publsh" or a
// "tool:pubx*" in ask or deny would otherwise match nothing and silently
// turn the gate off. The tools the agent can call are its own tools, its
// tasks, its skills' tools, the built-ins its configuration turns on
// (core:load_skill with skills, core:delegate for a supervisor, the loop
// tools with a loop, core:kg_* with knowledge, core:doc_* with documents,
// core:decide when t.Decisions) and what t.Plugins say each plugin may
// give it. The engine runs it at boot; a project loader runs it to point at
// the file and line. The error's Context "field" is the Config path of the
// selector (Agents[id="a"].Permissions.Ask[0]).
func CheckPermissionTargets(a *Agent, t PermissionTargets) error {
	targets := permissionTargets(a, t)
	for _, l := range []struct {
		list, field string
		sels        []string
	}{{"allow", "Allow", a.Permissions.Allow}, {"ask", "Ask", a.Permissions.Ask}, {"deny", "Deny", a.Permissions.Deny}} {
		for i, raw := range l.sels {
			sel, err := ParseSelector(raw)
			if err != nil {
				return err
			}
			if sel.Scope == ScopePlugin && t.Plugins == nil {
				continue
			}
			if missing, known := selectorTarget(sel, targets); missing != "" {
				return &BreadError{
					Code: CodeInvalidPermission,
					Message: "agent " + a.ID + ": permissions." + l.list + " selector " + quoteTruncated(raw) + " matches " + missing +
						"; known: " + knownList(known),
					Context: map[string]any{"agentId": a.ID, "selector": raw, "list": l.list, "known": known,
						"field": fmt.Sprintf("Agents[id=%q].Permissions.%s[%d]", a.ID, l.field, i)},
				}
			}
		}
	}
	return nil
}

func knownList(known []string) string {
	if len(known) == 0 {
		return "none"
	}
	return strings.Join(known, ", ")
}

// target is one tool an agent can call; a pattern's Name may hold *
// (a plugin's run-time tools), any other is taken literally.
type target struct {
	ToolOrigin
	pattern bool
}

// permissionTargets lists the tools a can call.
func permissionTargets(a *Agent, t PermissionTargets) []target {
	var out []target
	add := func(scope ToolScope, sub, name string) {
		out = append(out, target{ToolOrigin: ToolOrigin{Scope: scope, Sub: sub, Name: name}, pattern: scope == ScopePlugin})
	}
	for _, tool := range a.Tools {
		add(ScopeTool, "", tool.Name)
	}
	for _, task := range a.Tasks {
		add(ScopeTask, "", task)
	}
	for _, sk := range a.Skills {
		for _, tool := range sk.Tools {
			add(ScopeSkill, sk.ID, tool.Name)
		}
	}
	for _, name := range agentBuiltins(a, t.Decisions) {
		add(ScopeCore, "", name)
	}
	for _, p := range slices.Sorted(maps.Keys(t.Plugins)) {
		for _, name := range t.Plugins[p] {
			add(ScopePlugin, p, name)
		}
	}
	return out
}

// agentBuiltins are the core_* tools a's configuration turns on.
func agentBuiltins(a *Agent, decisions bool) []string {
	var out []string
	if len(a.Skills) > 0 {
		out = append(out, "load_skill")
	}
	if a.Supervisor != nil {
		out = append(out, "delegate")
	}
	if a.Loop != nil {
		out = append(out, "start_loop", "iterate_loop", "finish_loop")
	}
	if a.Knowledge != nil {
		out = append(out, "kg_store", "kg_query", "kg_forget")
	}
	if a.Documents != nil {
		out = append(out, "doc_ingest", "doc_search", "doc_read", "doc_load")
	}
	if decisions {
		out = append(out, "decide")
	}
	return out
}

// selectorTarget reports, when sel matches none of targets, what it fails
// to match and what exists in its scope; "" when it matches one.
func selectorTarget(sel Selector, targets []target) (missing string, known []string) {
	subs := map[string]bool{}
	inScope := map[string]bool{}
	subMatched := false
	for _, o := range targets {
		if o.Scope != sel.Scope {
			continue
		}
		subOK := !hasSub(sel.Scope) || segMatch(sel.Sub, sel.sub, o.Sub)
		if subOK && (sel.Matches(o.ToolOrigin) || o.pattern && globsOverlap(sel.Name, o.Name)) {
			return "", nil
		}
		subs[o.Sub] = true
		if subOK {
			subMatched = true
			inScope[PermID(o.ToolOrigin)] = true
		}
	}
	switch {
	case !hasSub(sel.Scope):
		return "no " + string(sel.Scope) + " tool of this agent", sortedKeys(inScope)
	case !subMatched && sel.Scope == ScopeSkill:
		return "no skill of this agent with tools", sortedKeys(subs)
	case !subMatched:
		return "no configured plugin that gives this agent tools", sortedKeys(subs)
	}
	return "no tool of " + string(sel.Scope) + " " + sel.Sub + " for this agent", sortedKeys(inScope)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
