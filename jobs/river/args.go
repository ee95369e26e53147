package riverjobs

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/breadai/bread/core"
)

// riverKind is the one River job kind of every core.Job: the core kind
// travels in the args, so the engine can add kinds without a River worker
// each.
const riverKind = "bread_job"

// jobArgs is a core.Job as River stores it. Only the key counts for
// uniqueness (river:"unique"), so a job per key whatever its kind or
// payload.
type jobArgs struct {
	JobKind string          `json:"kind"`
	Key     string          `json:"key" river:"unique"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

func (jobArgs) Kind() string { return riverKind }

// queuedStates are the states of a job that is queued or running: a key
// with a job in one of them is not enqueued again (the core contract).
var queuedStates = []rivertype.JobState{
	rivertype.JobStateAvailable,
	rivertype.JobStatePending,
	rivertype.JobStateRetryable,
	rivertype.JobStateRunning,
	rivertype.JobStateScheduled,
}

// tickStates add completed for schedule ticks: a tick that ran is not run
// again by a second leader (a failover within the tick's second), for as
// long as River keeps completed jobs (a day by default).
var tickStates = append(append([]rivertype.JobState(nil), queuedStates...), rivertype.JobStateCompleted)

func (q *Queue) insertOpts(kind string, maxAttempts int) *river.InsertOpts {
	states := queuedStates
	if kind == core.JobKindTick {
		states = tickStates
	}
	return &river.InsertOpts{
		MaxAttempts: maxAttempts,
		Queue:       q.opts.Queue,
		UniqueOpts:  river.UniqueOpts{ByArgs: true, ByState: states},
	}
}

func toCore(row *rivertype.JobRow) (core.Job, error) {
	var a jobArgs
	if err := json.Unmarshal(row.EncodedArgs, &a); err != nil {
		return core.Job{}, err
	}
	return core.Job{Kind: a.JobKind, Key: a.Key, Payload: a.Payload, MaxAttempts: row.MaxAttempts, Attempt: row.Attempt}, nil
}

// forwarder is the River worker of riverKind: it hands each job to the
// core.JobWorker given to Start.
//
// River rescues a job only once it outlived its timeout, so a queue that
// must release the jobs of a dead replica needs a finite JobTimeout; but a
// run must not be cut by one. So River's timeout stays finite, and the
// worker gets a context of its own, cut only by Stop's deadline, while a
// heartbeat moves the job's attempted_at forward: River's rescuer takes a
// job for stuck when that is older than RescueAfter, which a live job
// never lets it be, and a dead replica's job is after RescueAfter.
type forwarder struct {
	river.WorkerDefaults[jobArgs]
	worker   atomic.Pointer[core.JobWorker]
	stopping *atomic.Bool
	hardStop <-chan struct{} // closed when Stop's deadline passed
	beat     func(ctx context.Context, id int64) error
	every    time.Duration // heartbeat period
	log      *slog.Logger
}

func (f *forwarder) Work(ctx context.Context, job *river.Job[jobArgs]) error {
	w := f.worker.Load()
	if w == nil {
		// Start sets the worker before River starts; never reached.
		return river.JobSnooze(0)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(f.every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-f.hardStop:
				cancel()
				return
			case <-t.C:
				if err := f.beat(runCtx, job.ID); err != nil && runCtx.Err() == nil {
					f.log.Warn("riverjobs: job heartbeat", "key", job.Args.Key, "job_id", job.ID, "error", err.Error())
				}
			}
		}
	})
	err := (*w).WorkJob(runCtx, core.Job{
		Kind:        job.Args.JobKind,
		Key:         job.Args.Key,
		Payload:     job.Args.Payload,
		MaxAttempts: job.MaxAttempts,
		Attempt:     job.Attempt,
	})
	close(done)
	wg.Wait()
	var snooze *core.JobSnooze
	switch {
	case err == nil:
		return nil
	case errors.As(err, &snooze):
		return river.JobSnooze(max(snooze.After, 0))
	case runCtx.Err() != nil && f.stopping.Load():
		// Stop cancelled the job: River puts it back, without counting
		// the attempt, when the error is the context's own and River's
		// context of the job ended with River's stop as its cause. Stop
		// closes hardStop just before StopAndCancel cuts River's context,
		// so a job quick to return would otherwise be seen as failed.
		<-ctx.Done()
		return context.Canceled
	}
	return err
}
