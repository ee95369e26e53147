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
	if !r.in.records.keeps || !r.in.onLostRetries(ctx, rec) {
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

// handBackUnstarted reports whether err, the refusal of a background run
// this instance never started, hands the run back to its job queue, and
// marks it so (presetRun.handedBack: execRun then snoozes the job): a job
// run (it has an attempt) refused because its instance is stopping (the
// queue handed the job out between the instance's refusing runs and its
// queue's stop, or a stop cut the run while it waited for its session) or
// is at its run cap. Nothing of the run is written: its record stays as
// it was (queued), and a worker, of another replica when this one stops,
// starts it. Found by the chaos harness: such a job was done with its
// run's record queued for good (a schedule tick's run, after a SIGTERM
// drain), since the refusal wrote nothing and the job reported no error.
func (in *Instance) handBackUnstarted(ctx context.Context, p *presetRun, err error) bool {
	if p == nil || p.attempt == 0 || in.jobs == nil {
		return false
	}
	code := core.AsBreadError(err, "").Code
	stopped := code == core.CodeInstanceStopping || stoppedByInstance(err) || stoppedByInstance(context.Cause(ctx))
	if !stopped && code != core.CodeConcurrencyLimit {
		return false
	}
	in.log.Info("bread: a background run's job handed back to the queue before the run started", "run_id", p.runID, "attempt", p.attempt, "code", code)
	p.handedBack = true
	return true
}
