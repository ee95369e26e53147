package server

import (
	"context"

	"github.com/breadai/bread/core"
)

// Engine is everything the server needs of the engine, in one interface:
// the Runtime every port sees (with the store, bus and blob store as
// core's portable types), background runs, the plugins whose middleware and
// routes the server mounts, readiness, the cancel route's three reaches and
// the schedules. *engine.Instance
// implements it; the cli asserts that at compile time, so a renamed engine
// method fails the build instead of quietly turning a route into 501 or a
// probe into always-ready. The server never type-asserts an Engine for more.
//
// Another implementation (a fake in tests, a proxy to a remote engine)
// implements every method. Where it lacks a feature it says so the way each
// method documents: a background run returns a *core.BreadError with code
// NOT_IMPLEMENTED (the server answers 501); the lookups answer "none"
// (false, nil, or an empty list).
//
// Every method is safe for concurrent use once the engine has started.
type Engine interface {
	core.Runtime

	// RunBackground starts an agent's run that outlives the request
	// (POST /agents/{id}/run with Prefer: respond-async or "background":
	// true); see core.Detacher. NOT_IMPLEMENTED answers 501.
	RunBackground(ctx context.Context, agentID string, input any, opts core.RunOptions, bg core.BackgroundOptions) (core.Detached, error)
	// RunPipelineBackground starts a pipeline's run that outlives the
	// request; see core.PipelineDetacher. NOT_IMPLEMENTED answers 501.
	RunPipelineBackground(ctx context.Context, pipelineID string, input any, bg core.BackgroundOptions) (core.Detached, error)

	// Plugins lists the configured plugins in order: the server applies
	// their middleware (core.MiddlewareProvider) and mounts their routes
	// (core.RoutesProvider).
	Plugins() []core.BreadPlugin

	// Accepting reports whether the engine admits runs: started (store
	// migrated, bus started) and not stopping. GET /readyz fails its
	// "instance" check while it is false.
	Accepting() bool

	// CancelQueued ends a background run still waiting in the job queue,
	// so it never starts; found is false when the run is not queued
	// (unknown, running, over) or the engine has no job queue.
	// POST /runs/{runId}/cancel asks it first.
	CancelQueued(ctx context.Context, runID string) (found bool, err error)
	// CancelSuspended ends a run that waits for a human, from any replica;
	// found is false when the run is not waiting (unknown, running, over)
	// or the store keeps no run records. A resume in flight wins with
	// CHECKPOINT_CLAIMED (409); a run that cannot be cancelled alone (it
	// waits inside a composition) is NOT_IMPLEMENTED (501).
	// POST /runs/{runId}/cancel asks it last, after Options.Canceller.
	CancelSuspended(ctx context.Context, runID string) (found bool, err error)

	// Schedules lists the configured schedules with their next tick, for
	// GET /schedules; empty when there are none.
	Schedules() []core.ScheduleInfo
}
