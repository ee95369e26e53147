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
//     onLost policy retries it or it ends with RUN_LOST; a lapsed run a
//     sweeper declared lost first is read again, and one the sweeper left
//     queued for its job to retry is retried by this job, as above;
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
		return w.unrecorded(ctx, p)
	}
	if err != nil {
		return transient(err)
	}
	if rec.SessionID != "" {
		// The record names the run's session; the payload's may be
		// another. A schedule tick whose first attempt enqueued this job
		// and died before the record is handed out again, finds no record,
		// opens a session of its own and records the run under it (the
		// queue adds no second job under the key): the run goes where its
		// record says, which is what its clients read.
		p.Options.Session.ID = rec.SessionID
	}
	won := false
	if rec.Status == core.RunRunning {
		now := w.cfg.Now().UnixMilli()
		if rec.LeaseUntil >= now {
			return &core.JobSnooze{After: time.Duration(rec.LeaseUntil-now)*time.Millisecond + w.cfg.Lease/3}
		}
		if won, err = store.LoseRun(ctx, rec.ID, now); err != nil {
			return transient(err)
		}
		// Read again: a sweeper that won LoseRun may have written since
		// what it decided (queued for this job to retry, below).
		if rec, err = store.GetRun(ctx, p.RunID); err != nil {
			return transient(err)
		}
	}
	switch rec.Status {
	case core.RunQueued:
		if rec.Attempt > 0 {
			// A lost attempt the sweeper left to this job to retry (a
			// pipeline's from the step it lost), found queued already or
			// left so between this job's LoseRun and its read after it:
			// this job is the one the sweeper left it to, and no other
			// will come (found under -race and load: a job that read the
			// record queued then ended with nothing done, and the run
			// stayed queued for good).
			return runs.Retry(ctx, p, rec)
		}
		return runs.Exec(ctx, p, 1)
	case core.RunLost:
	default:
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

// unrecorded decides a run job that finds no record of its run. The job is
// enqueued before the record is written (engine's queueRun), so the record
// is either still to come or will never be:
//
//   - the job is younger than a lease: its enqueuer is between its two
//     writes, so the job is snoozed until the lease is over;
//   - older: its enqueuer died (or was paused) between them. The job
//     carries everything the run needs (agent, input, options, identity),
//     so it starts the run, which writes its record, rather than failing
//     it: its caller may have been told its id (a paused enqueuer wakes and
//     answers), and a caller that was not sees the run it asked for, as
//     after any request whose answer was lost. The enqueuer's late queued
//     write is an insert only (a fenced PutRun), so it never overwrites the
//     record the run wrote. A run whose session is gone (deleted with its
//     records), and a job queued before QueuedAt existed, are dropped, as
//     before.
//
// Found by the chaos harness (issue 31): written record-then-job, a replica
// SIGKILLed between the two left a queued record that no job would start.
func (w *Worker) unrecorded(ctx context.Context, p RunJob) error {
	attrs := runAttrs(p.RunID, p.AgentID, p.Options.Session.ID)
	if p.QueuedAt == 0 {
		w.cfg.Logger.Info("bread: a background run's record is gone (its session was deleted); not running it", attrs...)
		return nil
	}
	grace := w.cfg.Lease
	if grace <= 0 {
		grace = DefaultRecordGrace
	}
	if age := time.Duration(w.cfg.Now().UnixMilli()-p.QueuedAt) * time.Millisecond; age < grace {
		// The record is usually a store write behind: look again soon,
		// then less often (each wait as long as the job's age, so a few
		// snoozes cover the grace). Snoozing for the whole grace made
		// every run a worker picked up before its record wait a lease
		// (15 s by default): ticks and background runs late in CI.
		return &core.JobSnooze{After: min(grace-age, max(age, minRecordWait))}
	}
	if id := p.Options.Session.ID; id != "" {
		_, err := w.cfg.Store.GetSession(ctx, id)
		if errors.Is(err, core.ErrSessionNotFound) {
			w.cfg.Logger.Info("bread: a background run's record and session are gone (its session was deleted); not running it", attrs...)
			return nil
		}
		if err != nil {
			return transient(err)
		}
	}
	w.cfg.Logger.Warn("bread: a background run's job outlived its enqueuer, which never recorded the run; starting it", attrs...)
	return w.cfg.Runs.Exec(ctx, p, 1)
}

// minRecordWait is the shortest snooze of a job waiting for its record.
const minRecordWait = 50 * time.Millisecond

// DefaultRecordGrace is how long a run job waits for its record when the
// worker has no lease configured.
const DefaultRecordGrace = 15 * time.Second

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
