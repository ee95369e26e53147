package core

import (
	"context"
	"net/http"
)

// Router is how transports and plugins add HTTP routes without importing the
// server. Every route has an action name, which the server's authorization
// sees. Method "*" matches every method. Path parameters are written {name}
// and read with (*http.Request).PathValue.
type Router interface {
	Handle(action, method, path string, h http.Handler)
}

// The core HTTP actions, one per route of the HTTP API.
const (
	ActionAgentList      = "agent.list"      // GET /agents
	ActionAgentRead      = "agent.read"      // GET /agents/{id}
	ActionRunStart       = "run.start"       // POST /agents/{id}/run
	ActionPipelineStart  = "pipeline.start"  // POST /pipelines/{id}/run
	ActionRunResume      = "run.resume"      // POST /resume/{checkpointId}
	ActionRunRead        = "run.read"        // GET /runs/{runId}
	ActionRunStream      = "run.stream"      // GET /runs/{runId}/stream
	ActionRunCancel      = "run.cancel"      // POST /runs/{runId}/cancel
	ActionRunFileRead    = "run.file.read"   // GET /runs/{runId}/files/{key}
	ActionRunStreamToken = "run.streamToken" // POST /runs/{runId}/stream-token
	ActionSessionList    = "session.list"    // GET /sessions
	ActionSessionRead    = "session.read"    // GET /sessions/{id}
	ActionSessionDelete  = "session.delete"  // DELETE /sessions/{id}
	ActionSessionCleanup = "session.cleanup" // POST /sessions/cleanup
	ActionLoopList       = "loop.list"       // GET /loops
	ActionLoopRead       = "loop.read"       // GET /loops/{id}
	ActionTaskList       = "task.list"       // GET /tasks
	ActionTaskRead       = "task.read"       // GET /tasks/{id}
	ActionScheduleList   = "schedule.list"   // GET /schedules
	ActionHealthLive     = "health.live"     // GET /healthz
	ActionHealthReady    = "health.ready"    // GET /readyz
)

// HTTPActions lists every core action.
func HTTPActions() []string {
	return []string{
		ActionAgentList, ActionAgentRead, ActionRunStart, ActionPipelineStart,
		ActionRunResume, ActionRunRead, ActionRunStream, ActionRunCancel, ActionRunFileRead, ActionRunStreamToken,
		ActionSessionList, ActionSessionRead, ActionSessionDelete, ActionSessionCleanup,
		ActionLoopList, ActionLoopRead, ActionTaskList, ActionTaskRead, ActionScheduleList,
		ActionHealthLive, ActionHealthReady,
	}
}

type identityKey struct{}

// WithIdentity returns a context carrying the authenticated caller.
func WithIdentity(ctx context.Context, id *AuthIdentity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the caller an auth strategy authenticated, or nil.
func IdentityFrom(ctx context.Context) *AuthIdentity {
	id, _ := ctx.Value(identityKey{}).(*AuthIdentity)
	return id
}
