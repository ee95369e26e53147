package core

import "context"

// BackgroundOptions configure a run started in the background.
type BackgroundOptions struct {
	// Webhook, when set, is an http(s) URL the engine POSTs the run's
	// record to (RunRecord JSON, signed) once the run completes, fails, is
	// cancelled or suspends for a human.
	Webhook string `json:"webhook,omitempty"`
}

// Detached names a run started in the background: the run to tail, read
// and cancel, and the session it uses.
type Detached struct {
	RunID     string `json:"runId"`
	SessionID string `json:"sessionId,omitempty"`
}

// Detacher is implemented by a Runtime that runs agents in the background,
// on goroutines it owns: RunBackground returns as soon as the run has its id
// (or was refused: SESSION_BUSY, INSTANCE_STOPPING, an invalid webhook...),
// and the run goes on after ctx ends, keeping ctx's values (the caller's
// identity) but not its cancellation. The Runtime's Cancel and its shutdown
// end it. Its crumbs pass the same choke point as any run's.
type Detacher interface {
	RunBackground(ctx context.Context, agentID string, input any, opts RunOptions, bg BackgroundOptions) (Detached, error)
}

// PipelineDetacher is implemented by a Runtime that runs pipelines in the
// background: RunPipelineBackground returns the pipeline run's id once the
// run is queued or started, and its
// record, its step-by-step journal (GET /runs/{id}/stream) and Cancel work
// under that id. Detached.SessionID is empty: each step has its own.
type PipelineDetacher interface {
	RunPipelineBackground(ctx context.Context, pipelineID string, input any, bg BackgroundOptions) (Detached, error)
}
