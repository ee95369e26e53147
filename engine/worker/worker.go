package worker

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/breadai/bread/core"
)

// Runner is what the worker needs of the engine. Its methods are called on
// the job's goroutine; each returns once what it started has ended.
type Runner interface {
	// Exec runs attempt n of the job's run (an agent, or a pipeline when
	// PipelineID is set) under its run id to its end, and tells its
	// webhook how it ended.
	Exec(ctx context.Context, p RunJob, attempt int) error
	// Retry runs a lost run again, as attempt rec.Attempt+1 under the same
	// id, from its last durable point: the messages the lost attempt added
	// are removed first; a pipeline skips the steps it finished.
	Retry(ctx context.Context, p RunJob, rec core.RunRecord) error
	// RetriesLost reports whether the onLost policy retries the lost run
	// rec rather than ending it. The lease sweeper decides alike, so
	// exactly one of them acts.
	RetriesLost(ctx context.Context, rec core.RunRecord) bool
	// EndLost writes the end of a run nobody runs any more (a durable
	// agent:error RUN_LOST), as the lease sweeper would.
	EndLost(ctx context.Context, rec core.RunRecord)
	// Notify tells the job's webhook, if any, how its run ended, without
	// holding the job's goroutine.
	Notify(p RunJob, sessionID string)
}

// Ticks starts the run of a schedule's tick (schedule.Timetable).
type Ticks interface {
	Work(ctx context.Context, j core.Job) error
}

// Config is what a Worker works with.
type Config struct {
	// Store holds the run records the jobs are decided by; without run
	// records (core.StoreRuns) every run job simply runs.
	Store *core.Storage
	// Runs drives the engine.
	Runs Runner
	// Ticks starts schedule ticks; nil drops them (logged).
	Ticks Ticks
	// Lease is the engine's run lease: a job whose run another replica
	// holds is snoozed until its lease could lapse, plus a third of this.
	Lease time.Duration
	// Now is the engine's clock (leases are compared with it); nil is
	// time.Now.
	Now func() time.Time
	// Logger; nil is slog.Default().
	Logger *slog.Logger
}

// Worker is the engine's core.JobWorker.
type Worker struct{ cfg Config }

var _ core.JobWorker = (*Worker)(nil)

// New returns the Worker of cfg.
func New(cfg Config) *Worker {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Worker{cfg: cfg}
}

// WorkJob executes a job the queue hands this replica.
func (w *Worker) WorkJob(ctx context.Context, j core.Job) error {
	switch j.Kind {
	case core.JobKindRun:
		return w.workRun(ctx, j)
	case core.JobKindTick:
		if w.cfg.Ticks != nil {
			return w.cfg.Ticks.Work(ctx, j)
		}
	}
	w.cfg.Logger.Warn("bread: dropping a job of an unknown kind", "kind", j.Kind, "key", j.Key)
	return nil
}

func runAttrs(runID, agentID, sessionID string) []any {
	return core.RunLogAttrs(runID, sessionID, agentID)
}

// workRun executes a background run's job. The run's record decides what
// the job means now:
//
//   - queued: its first attempt starts, or, with an attempt, the lost
//     attempt the sweeper left to this job is retried;
//   - running under a live lease: another replica still runs it (the queue
//     handed the job out again, thinking it stuck), so the job is snoozed
//     until the lease could lapse: no run executes on two replicas at once;
//   - running under a lapsed lease, or lost: its process died. The agent's
//     onLost policy retries it or it ends with RUN_LOST;
//   - anything else: it ended (completed, failed, cancelled, suspended for
//     a human) and the job has nothing left to do.
func (w *Worker) workRun(ctx context.Context, j core.Job) error {
	var p RunJob
	if err := json.Unmarshal(j.Payload, &p); err != nil || p.RunID == "" {
		w.cfg.Logger.Error("bread: dropping a background run job whose payload does not decode", "key", j.Key, "error", err)
		return nil
	}
	store, runs := w.cfg.Store, w.cfg.Runs
	if !store.Has(core.StoreRuns) {
		return runs.Exec(ctx, p, 1)
	}
	rec, err := store.GetRun(ctx, p.RunID)
	if errors.Is(err, core.ErrRunNotFound) {
		w.cfg.Logger.Info("bread: a background run's record is gone (its session was deleted); not running it", runAttrs(p.RunID, p.AgentID, p.Options.Session.ID)...)
		return nil
	}
	if err != nil {
		return transient(err)
	}
	won := false
	switch rec.Status {
	case core.RunQueued:
		if rec.Attempt > 0 {
			// A lost attempt the sweeper left to this job to retry (a
			// pipeline's from the step it lost).
			return runs.Retry(ctx, p, rec)
		}
		return runs.Exec(ctx, p, 1)
	case core.RunRunning:
		now := w.cfg.Now().UnixMilli()
		if rec.LeaseUntil >= now {
			return &core.JobSnooze{After: time.Duration(rec.LeaseUntil-now)*time.Millisecond + w.cfg.Lease/3}
		}
		if won, err = store.LoseRun(ctx, rec.ID, now); err != nil {
			return transient(err)
		}
		if rec, err = store.GetRun(ctx, p.RunID); err != nil {
			return transient(err)
		}
	}
	if rec.Status != core.RunLost {
		return nil
	}
	if runs.RetriesLost(ctx, rec) {
		return runs.Retry(ctx, p, rec)
	}
	if won {
		// This worker found the lapsed lease before any sweeper: it writes
		// the run's end, as the sweeper would have.
		runs.EndLost(ctx, rec)
	}
	runs.Notify(p, rec.SessionID)
	return nil
}

// transientRetry is how long a job whose store could not be reached waits
// before a worker takes it again.
const transientRetry = time.Second

// transient is err as the job's result: a store that cannot be reached
// (STORE_UNAVAILABLE) snoozes the job, so it is taken again soon and no
// attempt is counted, instead of failing the attempt into the queue's
// backoff, which grows to minutes (found by the chaos harness: a tick's
// run stayed queued long after the database was back).
func transient(err error) error {
	var be *core.BreadError
	if errors.As(err, &be) && be.Code == core.CodeStoreUnavailable {
		return &core.JobSnooze{After: transientRetry}
	}
	return err
}
