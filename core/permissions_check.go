package core

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// BuiltinToolNames are the names of the engine's core_* tools, as
// selectors name them ("core:delegate").
var BuiltinToolNames = []string{
	"decide", "delegate", "doc_ingest", "doc_load", "doc_read", "doc_search",
	"finish_loop", "iterate_loop", "kg_forget", "kg_query", "kg_store", "load_skill", "start_loop",
}

// CheckPermissionTargets refuses a permission selector of a that names,
// without a wildcard, a tool the agent cannot have: a misspelled
// "tool:publsh" in ask or deny would otherwise match nothing and silently
// turn the gate off. Plugin tools are resolved per run, so only their plugin
// (one of plugins) is checked, and not at all when plugins is nil (a loader
// that does not know the plugins' names). The engine runs it at boot; a
// project loader runs it to point at the file and line.
func CheckPermissionTargets(a *Agent, plugins []string) error {
	tools := map[ToolScope]map[string]bool{ScopeTool: {}, ScopeTask: {}, ScopeCore: {}}
	for _, t := range a.Tools {
		tools[ScopeTool][t.Name] = true
	}
	for _, t := range a.Tasks {
		tools[ScopeTask][t] = true
	}
	for _, n := range BuiltinToolNames {
		tools[ScopeCore][n] = true
	}
	skills := map[string]map[string]bool{}
	for _, sk := range a.Skills {
		skills[sk.ID] = map[string]bool{}
		for _, t := range sk.Tools {
			skills[sk.ID][t.Name] = true
		}
	}
	var pluginSet map[string]bool
	if plugins != nil {
		pluginSet = map[string]bool{}
		for _, p := range plugins {
			pluginSet[p] = true
		}
	}
	for _, l := range []struct {
		list, field string
		sels        []string
	}{{"allow", "Allow", a.Permissions.Allow}, {"ask", "Ask", a.Permissions.Ask}, {"deny", "Deny", a.Permissions.Deny}} {
		list := l.list
		for i, raw := range l.sels {
			sel, err := ParseSelector(raw)
			if err != nil {
				return err
			}
			if missing, known := selectorTarget(sel, tools, skills, pluginSet); missing != "" {
				return &BreadError{
					Code: CodeInvalidPermission,
					Message: "agent " + a.ID + ": permissions." + list + " selector " + quoteTruncated(raw) + " names " + missing +
						"; known: " + strings.Join(known, ", "),
					Context: map[string]any{"agentId": a.ID, "selector": raw, "list": list, "known": known,
						"field": fmt.Sprintf("Agents[id=%q].Permissions.%s[%d]", a.ID, l.field, i)},
				}
			}
		}
	}
	return nil
}

// selectorTarget reports what an exact selector names that does not exist,
// with the names that do; "" when it names something real or is a pattern.
func selectorTarget(sel Selector, tools map[ToolScope]map[string]bool, skills map[string]map[string]bool, plugins map[string]bool) (missing string, known []string) {
	pattern := func(s string) bool { return strings.Contains(s, "*") }
	switch sel.Scope {
	case ScopeTool, ScopeTask, ScopeCore:
		if pattern(sel.Name) || tools[sel.Scope][sel.Name] {
			return "", nil
		}
		return "no " + string(sel.Scope) + " tool of this agent", sortedKeys(tools[sel.Scope])
	case ScopeSkill:
		if pattern(sel.Sub) {
			return "", nil
		}
		sk, ok := skills[sel.Sub]
		if !ok {
			return "no skill of this agent", sortedKeys(skills)
		}
		if pattern(sel.Name) || sk[sel.Name] {
			return "", nil
		}
		return "no tool of skill " + sel.Sub, sortedKeys(sk)
	case ScopePlugin:
		if plugins == nil || pattern(sel.Sub) || plugins[sel.Sub] {
			return "", nil
		}
		return "no configured plugin", sortedKeys(plugins)
	}
	return "", nil
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
