package engine

import (
	"context"

	"github.com/breadai/bread/core"
)

// ScopeObserver is an optional capability of a plugin, found by type
// assertion on Config.Plugins like core's optional plugin parts: the engine
// lets it wrap the context of every run and every pipeline step, so what it
// puts there (a tracing span, say) reaches everything the scope does: model
// calls, tools, delegated runs and remote agents. Its signature uses only
// core and standard types, so a plugin implements it without importing the
// engine.
//
// ObserveScope is called on the goroutine that executes the scope, before
// the scope emits anything, with a crumb describing it: *core.AgentRunStart
// for a run (also for a resumed or continued run, which keeps its run id;
// Input is then the human's response or the child's output) and
// *core.PipelineStepStart for a pipeline step. The crumb is not emitted and
// has no seq. It returns the context the scope runs under and a function
// the engine calls exactly once when the scope's execution is over: after
// the scope emitted its last crumb, though listeners may receive a nested
// run's crumbs a little later, when its parent relays them. Neither may
// block.
type ScopeObserver interface {
	ObserveScope(ctx context.Context, scope core.Crumb) (context.Context, func())
}

// RunInfo identifies the run a context belongs to.
type RunInfo struct {
	AgentID   string
	RunID     string
	SessionID string
}

type runInfoKey struct{}

// RunFromContext returns the run whose execution ctx belongs to: the
// context a run's model calls, tools, hooks and blob writes receive carries
// it. A nested run's context carries the nested run.
func RunFromContext(ctx context.Context) (RunInfo, bool) {
	ri, ok := ctx.Value(runInfoKey{}).(*RunInfo)
	if !ok {
		return RunInfo{}, false
	}
	return *ri, true
}

// observe marks ctx with the run and lets every ScopeObserver wrap it.
func (r *run) observe(ctx context.Context) (context.Context, func()) {
	ctx = context.WithValue(ctx, runInfoKey{}, &RunInfo{AgentID: r.agent.ID, RunID: r.id, SessionID: r.sessionID})
	if !r.in.observesScopes() {
		return ctx, noop
	}
	return r.in.observeScope(ctx, &core.AgentRunStart{CrumbBase: r.base(), Input: r.input, Skill: r.opts.Skill, ParentRunID: r.parentRunID})
}

// observesScopes reports whether a plugin observes scopes, so a run without
// one does not build the crumb that would describe its scope.
func (in *Instance) observesScopes() bool {
	for _, p := range in.cfg.Plugins {
		if _, ok := p.(ScopeObserver); ok {
			return true
		}
	}
	return false
}

// observeScope lets every ScopeObserver plugin wrap the context of scope,
// in plugin order; the returned function ends them in reverse order. With
// one observer (the usual case) its own end function is returned as is.
func (in *Instance) observeScope(ctx context.Context, scope core.Crumb) (context.Context, func()) {
	var first func()
	var more []func()
	for _, p := range in.cfg.Plugins {
		if o, ok := p.(ScopeObserver); ok {
			var end func()
			ctx, end = o.ObserveScope(ctx, scope)
			switch {
			case end == nil:
			case first == nil:
				first = end
			default:
				more = append(more, end)
			}
		}
	}
	switch {
	case first == nil:
		return ctx, noop
	case more == nil:
		return ctx, first
	}
	return ctx, func() {
		for i := len(more) - 1; i >= 0; i-- {
			more[i]()
		}
		first()
	}
}

func noop() {}
