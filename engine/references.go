package engine

import (
	"maps"
	"slices"

	"github.com/breadai/bread/core"
)

// checkSelectorTargets applies core.CheckPermissionTargets with the
// configured plugins.
func (in *Instance) checkSelectorTargets(a *core.Agent) error {
	plugins := make([]string, 0, len(in.cfg.Plugins))
	for _, p := range in.cfg.Plugins {
		plugins = append(plugins, p.Name())
	}
	return core.CheckPermissionTargets(a, plugins)
}

// checkReferences refuses compositions that name agents that do not exist
// (locally or as remote agents): pipeline steps, supervisor rosters and
// loop pools. It runs when every agent is known (plugins contribute agents
// at Start), so a Go-built config fails at boot, not mid-run after earlier
// steps spent tokens.
func (in *Instance) checkReferences() error {
	exists := func(id string) bool {
		if _, ok := in.agents[id]; ok {
			return true
		}
		_, ok := in.cfg.RemoteAgents[id]
		return ok
	}
	missing := func(where, id string) error {
		return &core.BreadError{
			Code:    core.CodeAgentNotFound,
			Message: where + " names agent " + quoteTruncated(id) + ", which is not configured",
			Context: map[string]any{"agentId": id, "where": where},
		}
	}
	var steps func(where string, list []core.PipelineStep) error
	steps = func(where string, list []core.PipelineStep) error {
		for _, s := range list {
			if s.AgentID != "" && !exists(s.AgentID) {
				return missing(where, s.AgentID)
			}
			for _, id := range slices.Sorted(maps.Values(s.Routes)) {
				if !exists(id) {
					return missing(where+" (route)", id)
				}
			}
			if err := steps(where, s.Steps); err != nil {
				return err
			}
		}
		return nil
	}
	for _, id := range in.cfg.Entrypoints {
		if !exists(id) {
			return missing("entrypoints", id)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(in.cfg.Pipelines)) {
		if err := steps("pipeline "+id, in.cfg.Pipelines[id]); err != nil {
			return err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(in.agents)) {
		a := in.agents[id]
		if sc := a.Supervisor; sc != nil {
			for _, sa := range sc.Agents {
				if !exists(sa.AgentID) {
					return missing("the roster of supervisor "+id, sa.AgentID)
				}
			}
		}
		if lc := a.Loop; lc != nil {
			for _, p := range lc.Pool {
				if !exists(p) {
					return missing("the loop pool of agent "+id, p)
				}
			}
		}
	}
	return nil
}
