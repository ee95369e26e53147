package engine

import (
	"context"
	"iter"

	"github.com/breadai/bread/core"
)

// Resume answers a suspended run's checkpoint and streams the continuation,
// starting with human:resumed and continuing the run's seq. For a human
// tool, response is the answer; for an ask-gated tool it is
// {"approved": true|false}. The checkpoint is claimed atomically: of two
// concurrent resumes, the loser gets CHECKPOINT_NOT_FOUND. Resume needs
// nothing but the store, so it works after a restart or on another replica.
func (in *Instance) Resume(ctx context.Context, checkpointID string, response any) iter.Seq2[core.Crumb, error] {
	return func(yield func(core.Crumb, error) bool) {
		// A background run's webhook, carried by its checkpoint, hears how
		// the continuation ended; a resume refused before it continued the
		// run (a claimed or invalid answer) tells it nothing.
		hook, sessionID := in.resumeWebhook(ctx, checkpointID)
		continued := false
		in.stream(ctx, "", func(c core.Crumb, err error) bool {
			if c != nil && hook.RunID != "" && c.Base().RunID == hook.RunID {
				continued = true
			}
			return yield(c, err)
		}, func(ctx context.Context, out *streamSink) error {
			_, err := in.resume(ctx, out, checkpointID, response)
			return err
		})
		if continued {
			in.sendWebhook(hook, sessionID)
		}
	}
}

// RunPipeline runs a pipeline declared in Config.Pipelines and streams its
// crumbs: pipeline:step:start and pipeline:step:end around each step, and
// the crumbs of every agent run inside. An unknown id is PIPELINE_NOT_FOUND.
func (in *Instance) RunPipeline(ctx context.Context, pipelineID string, input any) iter.Seq2[core.Crumb, error] {
	return func(yield func(core.Crumb, error) bool) {
		in.stream(ctx, pipelineID, yield, func(ctx context.Context, out *streamSink) error {
			_, err := in.runPipeline(ctx, out, pipelineID, input)
			return err
		})
	}
}
