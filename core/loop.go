package core

import (
	"context"
)

// LoopConfig lets an agent run agent-driven loops: it composes a sequential
// pipeline from Pool, runs it, judges the output, and re-runs the same
// pipeline until satisfied or MaxIterations (set by you, never by the model).
// It adds core_start_loop, core_iterate_loop and core_finish_loop.
type LoopConfig struct {
	Pool          []string      `json:"pool"`
	MaxIterations int           `json:"maxIterations"`
	Hooks         LoopHooks     `json:"-"`
	ErrorHandling ErrorHandling `json:"errorHandling,omitzero"`
}

// LoopHooks observe and steer a loop. They are the loop's own family: the
// plugin and global hook chains do not apply.
type LoopHooks struct {
	OnInit           func(ctx context.Context, lc LoopContext)
	OnIterationStart func(ctx context.Context, lc LoopContext, input any)
	// OnIterationEnd may replace an iteration's output: the replacement is
	// what the model sees and what the next iteration builds on; the stored
	// iteration and its crumb keep the pipeline's own output.
	OnIterationEnd func(ctx context.Context, lc LoopContext, output any) (*AfterRunResult, error)
	// OnError may recover an iteration with an output, retry it (bounded by
	// the loop's ErrorHandling.Retry), or fail it.
	OnError  func(ctx context.Context, lc LoopContext, err *BreadError) (*OnErrorResult, error)
	OnFinish func(ctx context.Context, lc LoopContext, status LoopStatus)
}

// LoopContext describes the loop a hook fires for.
type LoopContext struct {
	LoopID        string
	Pipeline      []string
	MaxIterations int
	// Iteration is the 1-based iteration the hook concerns (the number of
	// completed iterations for OnFinish).
	Iteration int
}
