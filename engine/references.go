package engine

import (
	"fmt"
	"maps"
	"slices"

	"github.com/breadai/bread/core"
)

// checkSelectorTargets applies core.CheckPermissionTargets with what the
// instance adds to an agent's tools: core_decide when there are deciders,
// and each plugin's tools (its global tools, and what its AgentToolNamer
// names for a; "*" for a resolver that cannot say).
func (in *Instance) checkSelectorTargets(a *core.Agent) error {
	t := core.PermissionTargets{Decisions: len(in.cfg.Decisions) > 0, Plugins: map[string][]string{}}
	for _, p := range in.cfg.Plugins {
		names := t.Plugins[p.Name()]
		if tp, ok := p.(core.ToolsProvider); ok {
			for _, tool := range tp.Tools() {
				names = append(names, tool.Name)
			}
		}
		if _, ok := p.(core.AgentToolsResolver); ok {
			if n, ok := p.(core.AgentToolNamer); ok {
				more, err := n.AgentToolNames(a)
				if err != nil {
					return core.AsBreadError(err, core.CodeInvalidConfig)
				}
				names = append(names, more...)
			} else {
				names = append(names, "*")
			}
		}
		t.Plugins[p.Name()] = names
	}
	return core.CheckPermissionTargets(a, t)
}

// checkReferences refuses compositions that name agents that do not exist
// (locally or as remote agents): pipeline steps, supervisor rosters and
// loop pools. It runs when every agent is known (plugins contribute agents
// at Start), so a Go-built config fails at boot, not mid-run after earlier
// steps spent tokens. The error names the Config field path of the bad
// reference (Context "field"), the Go-built counterpart of file:line.
func (in *Instance) checkReferences() error {
	exists := func(id string) bool {
		if _, ok := in.agents[id]; ok {
			return true
		}
		_, ok := in.cfg.RemoteAgents[id]
		return ok
	}
	missing := func(field, where, id string) error {
		return &core.BreadError{
			Code:    core.CodeAgentNotFound,
			Message: field + ": " + where + " names agent " + quoteTruncated(id) + ", which is not configured",
			Context: map[string]any{"agentId": id, "where": where, "field": field},
		}
	}
	var steps func(field, where string, list []core.PipelineStep) error
	steps = func(field, where string, list []core.PipelineStep) error {
		for i, s := range list {
			at := fmt.Sprintf("%s[%d]", field, i)
			if s.AgentID != "" && !exists(s.AgentID) {
				return missing(at+".AgentID", where, s.AgentID)
			}
			for _, key := range slices.Sorted(maps.Keys(s.Routes)) {
				if id := s.Routes[key]; !exists(id) {
					return missing(fmt.Sprintf("%s.Routes[%q]", at, key), where+" (route)", id)
				}
			}
			if err := steps(at+".Steps", where, s.Steps); err != nil {
				return err
			}
		}
		return nil
	}
	for i, id := range in.cfg.Entrypoints {
		if !exists(id) {
			return missing(fmt.Sprintf("Entrypoints[%d]", i), "entrypoints", id)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(in.cfg.Pipelines)) {
		if err := steps(fmt.Sprintf("Pipelines[%q]", id), "pipeline "+id, in.cfg.Pipelines[id]); err != nil {
			return err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(in.agents)) {
		a := in.agents[id]
		if sc := a.Supervisor; sc != nil {
			for i, sa := range sc.Agents {
				if !exists(sa.AgentID) {
					return missing(fmt.Sprintf("Agents[id=%q].Supervisor.Agents[%d].AgentID", id, i), "the roster of supervisor "+id, sa.AgentID)
				}
			}
		}
		if lc := a.Loop; lc != nil {
			for i, p := range lc.Pool {
				if !exists(p) {
					return missing(fmt.Sprintf("Agents[id=%q].Loop.Pool[%d]", id, i), "the loop pool of agent "+id, p)
				}
			}
		}
	}
	return nil
}
