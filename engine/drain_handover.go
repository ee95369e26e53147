package engine

import (
	"context"
	"time"

	"github.com/breadai/bread/core"
)

// errStoppedLost ends a background run cut by its instance's stop (a
// SIGTERM drain) whose agent's onLost policy does not retry it: it is lost,
// as when its process dies.
var errStoppedLost = &core.BreadError{Code: core.CodeRunLost, Message: "the run was lost: the instance running it stopped"}

// stopHandOver is how long a background run handed back at stop waits in
// the job queue before a worker, on another replica, retries it.
const stopHandOver = time.Second

// stoppedBackground reports whether err is this instance's stop cutting a
// background run (one a job runs: it has an attempt). Such a run is not
// cancelled for good, as a run a client started is: it follows its
// agent's onLost policy, as when its process dies (found by the chaos
// harness: a SIGTERM drain cancelled background runs instead of handing
// them over).
func (r *run) stoppedBackground(err error) bool {
	return r.jobAttempt > 0 && r.in.jobs != nil && r.in.stopped.Load() && stoppedByInstance(err)
}

// handOver gives a background run its instance's stop cut back to the
// job queue when its agent retries lost runs: the record goes back to
// queued, its attempt kept, and nothing of this attempt's end is logged or
// published (its tails wait for the retry). execRun then snoozes the job,
// and a worker of another replica retries it (workRun → retryLost), as it
// would a run whose process died. It reports false when the run is not
// retried (no run records, onLost fail, or its last attempt).
func (r *run) handOver(ctx context.Context) bool {
	rec := r.record()
	if !r.in.records.keeps || !r.in.retriesLost(ctx, rec) {
		return false
	}
	r.in.log.Warn("bread: background run handed back to the job queue at stop: another replica retries it", append(runAttrs(r.id, r.agent.ID, r.sessionID), "attempt", rec.Attempt)...)
	rec.Status, rec.CheckpointID, rec.UpdatedAt = core.RunQueued, "", r.in.nowMillis()
	r.recorded = true
	r.in.records.putEnd(context.WithoutCancel(ctx), rec)
	r.in.quietEnds.Store(r.id, struct{}{})
	if r.job != nil {
		r.job.handedBack = true
	}
	return true
}
