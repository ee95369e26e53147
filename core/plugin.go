package core

import (
	"context"
	"net/http"
)

// BreadPlugin extends the engine. A plugin implements Name and any of the
// optional capabilities below, discovered by type assertion: PluginIniter,
// PluginCloser, HooksProvider, AgentsProvider, ToolsProvider,
// AgentToolsResolver, AgentToolNamer, MiddlewareProvider, RoutesProvider, RunLeaser.
//
// Plugins initialise in Config.Plugins order at Start and close in reverse
// order at Stop.
type BreadPlugin interface {
	Name() string
}

// PluginIniter is called once at Start, after the store and transport are
// ready. ctx ends when the Instance stops (Stop during Start cancels it):
// work meant to outlive Init keeps context.WithoutCancel(ctx).
type PluginIniter interface {
	Init(ctx context.Context, rt Runtime) error
}

// PluginCloser is called once at Stop.
type PluginCloser interface {
	Close(ctx context.Context) error
}

// HooksProvider contributes global hooks, run after the scoped hooks and
// before Config.Hooks, for every scope.
type HooksProvider interface {
	Hooks() Hooks
}

// AgentsProvider contributes prebuilt agents.
type AgentsProvider interface {
	Agents() []*Agent
}

// ToolsProvider contributes global tools offered to every agent, named
// plugin_<tool> to the model. Tools is a declaration: the engine also calls
// it before Init, when it checks that every permission selector matches a
// tool (see CheckPermissionTargets).
type ToolsProvider interface {
	Tools() []Tool
}

// AgentToolsResolver contributes tools for one agent, driven by that agent's
// own plugin configuration (Agent.Plugins[name]). It is called once per run
// during tool assembly.
type AgentToolsResolver interface {
	ResolveAgentTools(ctx context.Context, agent *Agent) ([]Tool, error)
}

// AgentToolNamer is an optional part of an AgentToolsResolver: it names,
// without connecting anything, the tools ResolveAgentTools may give agent,
// as exact names or patterns with * (a selector's glob: "fs__*" for an MCP
// server's tools, discovered at run time). The engine checks plugin
// permission selectors against it at boot, so "plugin:p/x*" matching none
// of them fails instead of silently gating nothing. A resolver without it
// is taken to be able to give any name. It may be called before Init.
type AgentToolNamer interface {
	AgentToolNames(agent *Agent) ([]string, error)
}

// MiddlewareProvider wraps the server's handler; middleware applies before
// every route, whatever the registration order.
type MiddlewareProvider interface {
	Middleware(next http.Handler) http.Handler
}

// RunLeaser is implemented by plugins that track, across replicas, which
// replica runs which run (a cluster coordinator). The engine holds a lease
// for every run while it executes and releases it when the run ends or
// suspends; a replica that dies stops renewing its leases, so other replicas
// can tell its runs are lost instead of waiting forever.
type RunLeaser interface {
	HoldLease(ctx context.Context, runID string) (release func())
}

// CheckpointAnnotator is implemented by plugins that keep something of a
// run across its suspension, such as its trace context: the engine calls
// AnnotateCheckpoint with the suspending run's context and stores what it
// returns on the checkpoint (CheckpointRecord.Meta); the resumed run's
// context, on whichever replica resumes it, carries it back
// (CheckpointMetaFrom). Keys should be prefixed with the plugin's name.
type CheckpointAnnotator interface {
	AnnotateCheckpoint(ctx context.Context) map[string]string
}

type checkpointMetaKey struct{}

// WithCheckpointMeta returns a context carrying a resumed checkpoint's Meta.
func WithCheckpointMeta(ctx context.Context, meta map[string]string) context.Context {
	return context.WithValue(ctx, checkpointMetaKey{}, meta)
}

// CheckpointMetaFrom returns the Meta of the checkpoint the run of ctx
// resumed from, or nil.
func CheckpointMetaFrom(ctx context.Context) map[string]string {
	m, _ := ctx.Value(checkpointMetaKey{}).(map[string]string)
	return m
}

// RoutesProvider adds HTTP routes. Every route needs an action name; an
// unnamed route is refused when auth is on.
type RoutesProvider interface {
	Routes(r Router)
}
