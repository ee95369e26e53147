package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/engine/worker"
)

// runJob is the payload of a core.JobKindRun job (worker.RunJob).
type runJob = worker.RunJob

// enqueueRun stores a background run as a job of the configured queue: the
// run is checked (agent, input, webhook), its session opened and its record
// written as queued before the job is, so GET /runs/{id} and a cancel find
// it from the moment the caller has its id. runID is the run's id (a
// schedule's tick passes one derived from the tick, so a tick enqueued
// twice is one run).
func (in *Instance) enqueueRun(ctx context.Context, runID, agentID string, input any, opts core.RunOptions, bg core.BackgroundOptions) (core.Detached, error) {
	if in.stopped.Load() {
		return core.Detached{}, &core.BreadError{Code: core.CodeInstanceStopping, Message: "the bread instance is stopping; retry on another replica"}
	}
	rt, ok := in.agents[agentID]
	if !ok {
		return core.Detached{}, &core.BreadError{Code: core.CodeAgentNotFound, Message: "agent " + quoteTruncated(agentID) + " not found", Context: map[string]any{"agentId": agentID}}
	}
	if err := rt.validateInput(input); err != nil {
		return core.Detached{}, err
	}
	raw, err := in.checkBackground(ctx, input, bg)
	if err != nil {
		return core.Detached{}, err
	}
	if in.records.keeps {
		if rec, err := in.store.GetRun(ctx, runID); err == nil {
			if rec.Status == core.RunQueued && rec.Attempt == 0 {
				// Recorded, but its job may never have been: the process
				// died, or the queue failed, between the two writes (found
				// by the chaos harness: a tick's run queued for good with
				// no job). A queue adds no second job under one key, so
				// enqueueing again is safe.
				opts.Session = core.SessionOptions{ID: rec.SessionID}
				p := runJob{RunID: runID, AgentID: agentID, Input: raw, Options: opts, Webhook: bg.Webhook, Identity: core.IdentityFrom(ctx), Delegation: delegationChain(ctx)}
				if err := in.enqueueJob(ctx, p, rt.OnLost.Attempts()+core.DefaultJobAttempts); err != nil {
					return core.Detached{}, err
				}
			}
			return core.Detached{RunID: rec.ID, SessionID: rec.SessionID}, nil // already enqueued
		}
	}
	session, err := in.openSession(ctx, agentID, opts.Session)
	if err != nil {
		return core.Detached{}, err
	}
	opts.Session = core.SessionOptions{ID: session.ID}
	rec := core.RunRecord{ID: runID, AgentID: agentID, SessionID: session.ID}
	p := runJob{RunID: runID, AgentID: agentID, Input: raw, Options: opts, Webhook: bg.Webhook, Identity: core.IdentityFrom(ctx), Delegation: delegationChain(ctx)}
	// The queue's own attempts cover a worker that fails to start the run
	// (a store that is down) and the rescues of attempts lost with their
	// process, which the agent's onLost policy counts.
	if err := in.queueRun(ctx, rec, p, rt.OnLost.Attempts()+core.DefaultJobAttempts); err != nil {
		return core.Detached{}, err
	}
	return core.Detached{RunID: runID, SessionID: session.ID}, nil
}

// checkBackground checks what a background run needs before anything is
// written: a webhook this Instance would call, and a JSON input (the job
// carries it); it returns the input as JSON.
func (in *Instance) checkBackground(ctx context.Context, input any, bg core.BackgroundOptions) (json.RawMessage, error) {
	if bg.Webhook != "" {
		if err := in.checkWebhook(ctx, bg.Webhook); err != nil {
			return nil, err
		}
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, core.Errorf(core.CodeValidationError, "the input of a background run must be JSON: %v", err)
	}
	return raw, nil
}

// queueRun enqueues the job of p, then writes rec as queued, started by
// the caller of ctx. The job goes first: a process that dies between the
// two commits leaves a job without a record, which a worker starts once a
// lease has passed (package worker), never a queued record that no job
// would start (found by the chaos harness, issue 31). The record is written
// as an insert only, fenced by a token no record holds: a worker that
// already started the run from its job (the enqueuer paused between the
// two writes) keeps its record. A job the queue refuses leaves rec failed.
func (in *Instance) queueRun(ctx context.Context, rec core.RunRecord, p runJob, maxAttempts int) error {
	now := in.nowMillis()
	rec.Status, rec.StartedBy, rec.CreatedAt, rec.UpdatedAt = core.RunQueued, core.OwnerKey(core.IdentityFrom(ctx)), now, now
	p.QueuedAt = now
	if err := in.enqueueJob(ctx, p, maxAttempts); err != nil {
		if in.records.keeps {
			// Written like a run's end, retried: the queue failing is
			// often the database failing, and the job may have been
			// stored all the same (an answer lost with its connection):
			// its worker then finds the run failed, not a missing record.
			rec.Status, rec.ErrorCode, rec.UpdatedAt = core.RunFailed, core.CodeInternalError, in.nowMillis()
			in.records.putEnd(context.WithoutCancel(ctx), rec)
		}
		return err
	}
	if !in.records.keeps {
		return nil
	}
	insert := core.WithRunFence(ctx, core.RunFence{RunID: rec.ID, Token: "queued:" + in.newID()})
	if err := in.store.PutRun(insert, rec); err != nil {
		if be := (*core.BreadError)(nil); errors.As(err, &be) && be.Code == core.CodeRunTaken {
			return nil // a worker started the run from its job already
		}
		// The job is queued: the request fails only if the job is taken
		// back; otherwise a worker starts the run once a lease has passed
		// (or has started it), and the caller gets its id.
		if job, cerr := in.jobs.CancelJob(context.WithoutCancel(ctx), rec.ID); cerr == nil && job != nil {
			return err
		}
		in.log.Warn("bread: a background run's queued record could not be written; its job will start it", append(runAttrs(rec.ID, rec.AgentID, rec.SessionID), "error", err)...)
	}
	return nil
}

// enqueueJob enqueues the job of a background run.
func (in *Instance) enqueueJob(ctx context.Context, p runJob, maxAttempts int) error {
	if p.QueuedAt == 0 {
		p.QueuedAt = in.nowMillis()
	}
	payload, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if err := in.jobs.Enqueue(ctx, core.Job{Kind: core.JobKindRun, Key: p.RunID, Payload: payload, MaxAttempts: maxAttempts}); err != nil {
		// The queue's error can name its database: it stays in the log.
		in.log.Error("bread: queueing a background run failed", append(runAttrs(p.RunID, p.AgentID, p.Options.Session.ID), "error", err)...)
		return &core.BreadError{Code: core.CodeInternalError, Message: "the background run could not be queued; the server logged why", Cause: err}
	}
	return nil
}

// newWorker is the Instance's job worker (package worker), driving the
// Instance through jobRunner.
func (in *Instance) newWorker() *worker.Worker {
	cfg := worker.Config{Store: in.store, Runs: jobRunner{in}, Lease: in.records.lease, Now: in.clock.Now, Logger: in.log}
	if in.timetable != nil { // checked at Start
		cfg.Ticks = in.timetable
	}
	return worker.New(cfg)
}

// jobRunner is the Instance's worker.Runner. It is its own type so that
// its methods are not part of the Instance's API.
type jobRunner struct{ in *Instance }

func (r jobRunner) Exec(ctx context.Context, p runJob, attempt int) error {
	if p.PipelineID != "" {
		return r.in.execPipeline(ctx, p, attempt, pipelineStart{})
	}
	return r.in.execRun(ctx, p, attempt)
}

func (r jobRunner) Retry(ctx context.Context, p runJob, rec core.RunRecord) error {
	if p.PipelineID != "" {
		return r.in.retryPipeline(ctx, p, rec)
	}
	return r.in.retryLost(ctx, p, rec)
}

func (r jobRunner) RetriesLost(ctx context.Context, rec core.RunRecord) bool {
	return r.in.retriesLost(ctx, rec)
}

func (r jobRunner) EndLost(ctx context.Context, rec core.RunRecord) {
	r.in.records.lost(ctx, rec, r.in.nowMillis())
}

func (r jobRunner) Notify(p runJob, sessionID string) { r.in.sendWebhook(p, sessionID) }

// retriesLost reports whether a lost run is retried rather than ended: its
// onLost policy retries it (onLostRetries) and its log has not ended (its
// owner logged its end, then died before recording it: records.lost makes
// the record agree instead). The sweeper and the job worker decide alike,
// so exactly one of them acts.
func (in *Instance) retriesLost(ctx context.Context, r core.RunRecord) bool {
	return in.onLostRetries(ctx, r) && in.loggedEnd(ctx, r.ID) == nil
}

// onLostRetries reports whether the onLost policy retries a lost run: a
// background run (it has an attempt) of an agent whose onLost policy is
// retry, with attempts left, on an Instance with a job queue.
//
// A background pipeline is retried by the policy of the agent of the step
// it lost (a parallel or route step has none: it fails).
func (in *Instance) onLostRetries(ctx context.Context, r core.RunRecord) bool {
	if in.jobs == nil || r.Attempt == 0 {
		return false
	}
	agentID := r.AgentID
	if r.PipelineID != "" {
		agentID = in.pipelineProgress(ctx, r.ID).inFlight
	}
	rt, ok := in.agents[agentID]
	return ok && rt.OnLost.Action == core.LostRetry && r.Attempt < rt.OnLost.Attempts()
}

// retryLost runs a lost background run again under its id, from its last
// durable point: the messages the lost attempt added to the session are
// removed first (or, with a store that cannot remove them, closed like an
// interrupted run's), so the retry sees the session as the attempt found it.
func (in *Instance) retryLost(ctx context.Context, p runJob, rec core.RunRecord) error {
	since := in.attemptStart(ctx, rec)
	in.log.Warn("bread: retrying a lost background run", append(runAttrs(rec.ID, rec.AgentID, rec.SessionID), "attempt", rec.Attempt+1)...)
	if in.store.Has(core.StoreMessageDelete) && rec.SessionID != "" && !in.sessionMovedOn(ctx, rec, since) {
		msgs, err := in.store.GetMessages(ctx, rec.SessionID)
		if err != nil {
			return err
		}
		var ids []string
		for _, m := range msgs {
			if m.Timestamp >= since {
				ids = append(ids, m.ID)
			}
		}
		if len(ids) > 0 {
			if _, err := in.store.DeleteMessages(ctx, rec.SessionID, ids); err != nil {
				return err
			}
		}
	} else {
		in.closeInterrupted(ctx, rec.SessionID, since, core.CodeRunLost)
	}
	return in.execRun(ctx, p, rec.Attempt+1)
}

// sessionMovedOn says whether another run of rec's session was recorded
// since the lost attempt of rec began: its turn then follows the lost
// attempt's, which the other run closed when it claimed the session
// (claimSession), and removing the messages written since would remove
// that run's turn too. A failed read counts as moved on: a turn left in
// place is safer than one removed.
func (in *Instance) sessionMovedOn(ctx context.Context, rec core.RunRecord, since int64) bool {
	if !in.store.Has(core.StoreRunList) {
		return false
	}
	runs, err := in.store.ListRuns(ctx, core.RunFilter{SessionID: rec.SessionID, UpdatedSince: since})
	if err != nil {
		return true
	}
	return slices.ContainsFunc(runs, func(r core.RunRecord) bool { return r.ID != rec.ID && r.CreatedAt >= since })
}

// attemptStart is when the lost attempt of rec started: the time of the
// last agent:run:start in its crumb log, else when the run was queued.
func (in *Instance) attemptStart(ctx context.Context, rec core.RunRecord) int64 {
	since := rec.CreatedAt
	if !in.store.Has(core.StoreCrumbLog) {
		return since
	}
	var after int64
	for {
		entries, err := in.store.GetCrumbs(ctx, rec.ID, after, 500)
		if err != nil || len(entries) == 0 {
			return since
		}
		for _, e := range entries {
			if e.Type == core.TypeAgentRunStart && e.AgentID == rec.AgentID {
				since = e.CreatedAt
			}
			after = e.Seq
		}
	}
}

// execRun runs attempt n of a background run on the job's goroutine and
// tells its webhook how it ended. The run's context is the job's: a queue
// that stops cancels it, and so do Cancel and Stop, which track it like any
// run.
func (in *Instance) execRun(ctx context.Context, p runJob, attempt int) error {
	input := p.DecodeInput()
	ctx = withWebhook(core.WithIdentity(in.jobDelegation(ctx, p), p.Identity), p.Webhook)
	preset := &presetRun{runID: p.RunID, attempt: attempt}
	sessionID := p.Options.Session.ID
	var last core.Crumb
	for c := range in.Run(context.WithValue(ctx, presetKey{}, preset), p.AgentID, input, p.Options) {
		if c != nil && c.Base().SessionID != "" {
			sessionID = c.Base().SessionID
		}
		if c != nil {
			last = c
		}
	}
	if preset.handedBack || in.leftToThisJob(ctx, last, p.RunID, attempt) {
		return &core.JobSnooze{After: stopHandOver}
	}
	in.sendWebhook(p, sessionID)
	return nil
}

// leftToThisJob reports whether an attempt that ended RUN_LOST (another
// instance took the run: this one was paused or cut off past its lease)
// was left to this very job to retry: a sweeper declared it lost and
// recorded it queued, its attempt kept, for its job, and this job is the
// one the queue holds, so it must not end. Snoozed, the job is handed out
// again and retries it (package worker). Found by the chaos harness once
// the sweeper stopped writing the lost attempt's token back: a replica
// paused (SIGSTOP) for less than the queue's rescue delay woke, its
// attempt was refused as taken, its job ended, and the run stayed queued
// for good (before, the token written back let the paused attempt go on).
func (in *Instance) leftToThisJob(ctx context.Context, last core.Crumb, runID string, attempt int) bool {
	e, ok := last.(*core.AgentError)
	if !ok || e.Error == nil || e.Error.Code != core.CodeRunLost || !in.records.keeps {
		return false
	}
	rec, err := in.store.GetRun(context.WithoutCancel(ctx), runID)
	return err == nil && rec.Status == core.RunQueued && rec.Attempt >= attempt && attempt > 0
}

// jobDelegation returns ctx at the depth the job's caller was
// (RunJob.Delegation), bounded by the limit as a checkpoint's chain is: a
// worker's context is top level, and a run queued from a
// Bread-Delegation-Depth request or a delegating run would otherwise start
// the delegation limit again.
func (in *Instance) jobDelegation(ctx context.Context, p runJob) context.Context {
	chain := p.Delegation
	if max := in.maxDelegationDepth(); len(chain) > max {
		chain = chain[:max]
	}
	return core.WithDelegationChain(ctx, chain)
}

// sendWebhook tells a background run's webhook, if it has one, how it
// ended, from an Instance-owned goroutine so the job's worker is free.
func (in *Instance) sendWebhook(p runJob, sessionID string) {
	if p.Webhook == "" {
		return
	}
	if err := in.checkWebhook(context.Background(), p.Webhook); err != nil {
		in.log.Warn("bread: a background run's webhook is no longer allowed; not calling it", append(runAttrs(p.RunID, p.AgentID, sessionID), "error", err)...)
		return
	}
	in.bg.goFn(func() { in.deliver(p.Webhook, core.Detached{RunID: p.RunID, SessionID: sessionID}, nil) })
}

// CancelQueued cancels a background run still waiting in the job queue: it
// never starts, its record says cancelled, its one crumb is agent:error
// RUN_CANCELLED and its webhook is told. It reports false for a run that is
// not queued (running: Cancel stops it; unknown; ended).
func (in *Instance) CancelQueued(ctx context.Context, runID string) (bool, error) {
	if in.jobs == nil || !in.records.keeps {
		return false, nil
	}
	rec, err := in.store.GetRun(ctx, runID)
	if errors.Is(err, core.ErrRunNotFound) {
		return false, nil
	}
	if err != nil || rec.Status != core.RunQueued {
		return false, err
	}
	job, err := in.jobs.CancelJob(ctx, runID)
	if err != nil || job == nil {
		return false, err
	}
	now := core.NowMillis()
	in.records.ended(ctx, rec, outcome{}, ErrCancelRequested)
	in.endDurably(ctx, rec, now, ErrCancelRequested)
	var p runJob
	if json.Unmarshal(job.Payload, &p) == nil {
		in.sendWebhook(p, rec.SessionID)
	}
	return true, nil
}

// startJobs starts the job queue once runs are admitted: Config.Jobs, or,
// without one, an in-process queue that fires the schedules.
func (in *Instance) startJobs(ctx context.Context) error {
	in.queue = in.jobs
	if in.queue == nil && in.timetable.Len() > 0 {
		in.queue = core.NewQueue(memory.NewQueue(memory.QueueOptions{Logger: in.log}))
	}
	if in.queue == nil {
		return nil
	}
	if err := in.queue.Start(ctx, in.newWorker(), in.timetable.Jobs()); err != nil {
		in.queue = nil
		return fmt.Errorf("bread: start the job queue: %w", err)
	}
	return nil
}

// stopJobs stops handing this Instance jobs; the runs of those running
// were cancelled by Stop just before, so they end quickly.
func (in *Instance) stopJobs(ctx context.Context) error {
	if in.queue == nil {
		return nil
	}
	// Like the store and the bus, a queue that holds a connection is
	// closed with the Instance: Queue.Stop closes it once stopped.
	if err := in.queue.Stop(ctx); err != nil {
		return fmt.Errorf("bread: stop the job queue: %w", err)
	}
	return nil
}
