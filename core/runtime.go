package core

import (
	"context"
	"iter"
	"log/slog"
)

// Runtime is the engine as a port sees it: what a plugin's Init and a
// transport's Mount may call. The engine implements it; ports never name the
// concrete engine type, the way database/sql/driver never names *sql.DB, so
// an adapter needs only this package.
//
// Every method is safe for concurrent use once the engine has started.
type Runtime interface {
	// Run starts agentID and streams its crumbs; see the engine's Run for
	// the stream's contract. Breaking out of the range cancels the run.
	Run(ctx context.Context, agentID string, input any, opts RunOptions) iter.Seq2[Crumb, error]
	// Resume continues the run suspended at checkpointID with a human's
	// response.
	Resume(ctx context.Context, checkpointID string, response any) iter.Seq2[Crumb, error]
	// ResumeWith is Resume with what the resuming client gives the
	// continuation (its context, tools and state; see ClientInput): the
	// run goes on with those instead of none.
	ResumeWith(ctx context.Context, checkpointID string, response any, client ClientInput) iter.Seq2[Crumb, error]
	// RunPipeline starts a configured pipeline.
	RunPipeline(ctx context.Context, pipelineID string, input any) iter.Seq2[Crumb, error]
	// Cancel cancels a run executing on this engine; false when it is not
	// running here.
	Cancel(runID string) bool
	// On registers a listener for every crumb of every run and returns the
	// function that removes it.
	On(l Listener) (remove func())

	// Storage is the configured store, behind the type that owns its
	// optional capabilities: a port never type-asserts the store.
	Storage() *Storage
	// Bus is the live crumb fabric between replicas (the in-process bus by
	// default), behind its portable type.
	Bus() *Bus
	// Blobs is the configured blob store, behind its portable type; nil
	// (whose every call answers BLOB_STORE_NOT_CONFIGURED) when there is
	// none.
	Blobs() *Blobs
	// CrumbFilter is the filter applied before the bus, or nil; an ingress
	// replaying from the store applies it too.
	CrumbFilter() func(Crumb) bool
	// Agent returns an agent by id; Agents returns every agent, sorted by id.
	Agent(id string) (*Agent, bool)
	Agents() []*Agent
	// Pipelines returns the configured pipelines.
	Pipelines() map[string][]PipelineStep
	// Entrypoint reports whether an ingress may list and run agentID:
	// every agent when no entrypoints are configured, otherwise only those
	// listed. Compositions still run the others.
	Entrypoint(agentID string) bool
	// Logger is the engine's logger.
	Logger() *slog.Logger
}

// Listener receives every crumb that passes the engine's choke point, after
// it is numbered. It runs on the run's goroutine: it must not block, and it
// must treat the crumb as read-only. A panicking listener is recovered and
// logged.
type Listener func(ctx context.Context, c Crumb)
