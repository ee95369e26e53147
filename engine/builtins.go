package engine

import (
	"context"

	"github.com/breadai/bread/core"
)

// builtinSources returns the tools an agent's configuration turns on: skill
// tools and core_load_skill, task tools, the knowledge and document tools,
// core_delegate and the loop tools. Each runtime that keeps state across the
// run's tool calls (the supervisor's delegation caps, the active loop) is
// created once per run.
func (r *run) builtinSources(ctx context.Context) ([]toolSource, error) {
	a := r.agent
	var out []toolSource
	builtin := func(t core.Tool) {
		out = append(out, toolSource{origin: core.ToolOrigin{Scope: core.ScopeCore, Name: t.Name}, tool: &t})
	}
	for _, s := range r.activeSkills() {
		for i := range s.Tools {
			out = append(out, toolSource{origin: core.ToolOrigin{Scope: core.ScopeSkill, Sub: s.ID, Name: s.Tools[i].Name}, tool: &s.Tools[i]})
		}
	}
	if len(a.Skills) > 0 {
		builtin(r.loadSkillToolFor())
	}
	static, err := a.staticTools(r.in)
	if err != nil {
		return nil, err
	}
	out = append(out, static...)
	r.mu.Lock()
	if a.Supervisor != nil && r.supervisor == nil {
		r.supervisor = newSupervisorRuntime(r, a.Supervisor)
	}
	restore := false
	if a.Loop != nil && r.loop == nil {
		r.loop = newLoopRuntime(r, a.Loop)
		restore = true
	}
	sup, loop := r.supervisor, r.loop
	r.mu.Unlock()
	if restore {
		loop.restore(ctx)
	}
	if sup != nil {
		builtin(sup.delegateTool())
	}
	if loop != nil {
		for _, t := range loop.tools() {
			builtin(t)
		}
	}
	if len(r.in.cfg.Decisions) > 0 {
		builtin(r.in.decideTool())
	}
	return out, nil
}

// staticTools returns the agent's task, knowledge and document tools, built
// on the first run and shared by every later one: they depend only on the
// agent's definition and the instance's store, and building them anew
// reflected their argument types on every run. The tools are never changed
// once built.
func (rt *agentRT) staticTools(in *Instance) ([]toolSource, error) {
	rt.staticOnce.Do(func() { rt.static, rt.staticErr = buildStaticTools(in, rt.Agent) })
	return rt.static, rt.staticErr
}

func buildStaticTools(in *Instance, a *core.Agent) ([]toolSource, error) {
	var out []toolSource
	builtin := func(t core.Tool) {
		out = append(out, toolSource{origin: core.ToolOrigin{Scope: core.ScopeCore, Name: t.Name}, tool: &t})
	}
	for _, id := range a.Tasks {
		task, ok := in.tasks[id]
		if !ok {
			return nil, taskNotFound(in, id, a.ID)
		}
		t := in.taskTool(task, a)
		out = append(out, toolSource{origin: core.ToolOrigin{Scope: core.ScopeTask, Name: task.Name}, tool: &t})
	}
	if a.Knowledge != nil {
		if in.store.Has(core.StoreKnowledge) {
			for _, t := range knowledgeTools(in.store, a.ID) {
				builtin(t)
			}
		}
	}
	if a.Documents != nil {
		if in.store.Has(core.StoreDocuments) {
			for _, t := range documentTools(in.store, a.ID, *a.Documents) {
				builtin(t)
			}
		}
	}
	return out, nil
}
