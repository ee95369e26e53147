package engine

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
)

// run is one execution of a local agent: one run id, one session, one hook
// chain. Its methods run on the goroutine that owns its sink unless they say
// otherwise.
type run struct {
	in        *Instance
	out       sink
	agent     *agentRT
	id        string
	sessionID string
	input     any
	opts      core.RunOptions
	hooks     hookChain
	started   time.Time
	cancel    context.CancelCauseFunc
	files     []core.FileOutput
	usage     core.Usage
	// calls is each model call's usage, in order (AgentRunEnd.ModelCalls).
	calls []core.Usage
	// oneCall backs calls for a run's first model call, so a run that
	// makes one allocates nothing for it.
	oneCall [1]core.Usage
	// parent links a run inside a composition to the rest of it; it is
	// stored on the checkpoint if the run suspends.
	parent *core.CheckpointParent
	// parentRunID is the run this one started in (AgentRunStart's
	// ParentRunID), "" at top level.
	parentRunID string
	// resumedFrom is the checkpoint a resumed run continues from, until
	// recordEnd settles it.
	resumedFrom *core.CheckpointRecord
	// claimed is set when the run's record went running with its claim on
	// its session (claimSession).
	claimed bool
	// jobAttempt is a background run's attempt (core.RunRecord.Attempt),
	// 0 for a run started in a request.
	jobAttempt int
	// fence is the core.RunFence token of this attempt at the run, written
	// into its record when it goes running; every later durable write of
	// the run is made under it ("" when the store keeps no records).
	fence string
	// heldFence is the record's token a resume read when it claimed its
	// checkpoint (nil: not read): its take is conditioned on it;
	// lostAtTake is set when that take was refused.
	heldFence  *string
	lostAtTake bool
	// heldSince is when the run last knew it was this instance's (Unix
	// ms): when it began (a resume: when it claimed its checkpoint), or
	// when stillOurs last checked.
	heldSince int64
	// job is the background run's preset (nil for a run started in a
	// request): handOver tells its job it was handed back.
	job *presetRun
	// recorded is set once the run's outcome is in its run record.
	recorded bool
	// wrote is set once this attempt added messages to the session.
	wrote bool
	// fresh is set for a run under an id this instance just minted: it has
	// no crumbs logged, so its numbering starts at zero without asking the
	// crumb log. (A background run's id may be a retried attempt's.)
	fresh bool
	// known is the session's whole history when this run created the
	// session under an id the instance minted, so nobody else can have
	// written to it: the first model call then skips reading the messages
	// back from the store. nil: read them.
	known []core.Message
	// derived is the cancel of the context runTop derived for this run
	// alone; bind cancels through it instead of deriving another.
	derived context.CancelCauseFunc
	// start is the run's start on a session it creates, not written yet
	// (writeStart; see runwrites.go); unstarted is set when writing it
	// failed, so nothing of the run exists to record.
	start     *core.RunWrite
	unstarted bool
	// The values start and its record point to, kept here so a run's
	// grouped writes allocate nothing of their own.
	startWrite   core.RunWrite
	startSession core.NewSession
	startRecord  core.RunRecord
	endRecord    core.RunRecord
	// last holds the messages of the run's last turn until its ended
	// record is written with them (persistLast).
	last []core.SessionMessage
	// told is the crumb that ends the run (agent:run:end, agent:error),
	// which its end write may log with it (writeEnd, endLogged, fold);
	// recordEnd takes it, whatever it writes.
	told core.Crumb

	// Built-in runtimes, set up by assembleTools when configured.
	mu         sync.Mutex
	skills     map[string]bool // skills active in this run (caller- or agent-loaded)
	supervisor *supervisorRuntime
	loop       *loopRuntime

	// stateMu orders the changes of the session's state document within
	// the run (core_state_update); state is the run's copy, nil until read.
	stateMu  sync.Mutex
	state    []byte
	stateRev int // how many patches the run applied
}

// outcome is how a run ended when it did not fail: with an output, or
// suspended on a checkpoint.
type outcome struct {
	output    any
	suspended bool
	// checkpointID is the checkpoint a suspended run waits on;
	// checkpointIDs lists several when a composition waits on more (the
	// branches of a parallel step).
	checkpointID  string
	checkpointIDs []string
}

// checkpoints lists every checkpoint a suspended outcome waits on.
func (o outcome) checkpoints() []string {
	if o.checkpointID != "" {
		return append([]string{o.checkpointID}, o.checkpointIDs...)
	}
	return o.checkpointIDs
}

// errConsumerGone cancels a run whose stream nobody reads any more.
var errConsumerGone = &core.BreadError{Code: core.CodeRunCancelled, Message: "the stream's consumer went away"}

// runAgent starts agentID: a remote agent is relayed; a local one is looked
// up, its input validated, its session opened, and its run executed. parent
// links the run into a composition (nil at top level).
func (in *Instance) runAgent(ctx context.Context, out sink, agentID string, input any, opts core.RunOptions, parent *core.CheckpointParent) (outcome, error) {
	if remote, ok := in.cfg.RemoteAgents[agentID]; ok && remote != nil {
		return in.relay(ctx, out, agentID, remote, input, opts)
	}
	rt, ok := in.agents[agentID]
	if !ok {
		return outcome{}, &core.BreadError{Code: core.CodeAgentNotFound, Message: "agent " + quoteTruncated(agentID) + " not found", Context: map[string]any{"agentId": agentID}}
	}
	if err := rt.validateInput(input); err != nil {
		return outcome{}, err
	}
	if parent == nil {
		return in.runTop(ctx, out, rt, input, opts)
	}
	session, err := in.openSession(ctx, agentID, opts.Session)
	if err != nil {
		return outcome{}, err
	}
	r := in.newRun(rt, in.newID(), session.ID, input, opts)
	r.fresh = true
	r.parent = parent
	return r.execute(ctx, out)
}

// runTop runs a top-level agent run while it holds its session on this
// instance (see sessionGate): a session a client names is claimed before it
// is opened, so two first runs on a new id do not race to create it.
func (in *Instance) runTop(ctx context.Context, out sink, rt *agentRT, input any, opts core.RunOptions) (outcome, error) {
	// A background run comes with its run id, so it can be named (and
	// cancelled) while it waits for its session; runs it starts get their
	// own.
	runID, preset := in.newID(), presetFrom(ctx)
	if preset != nil {
		runID = preset.runID
		ctx = context.WithValue(ctx, presetKey{}, (*presetRun)(nil))
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	key := opts.Session.ID
	acquireCtx := ctx
	if preset != nil {
		// Cancel reaches the run from here until execute tracks it.
		untrack := in.trackQueued(runID, cancel)
		defer untrack()
		acquireCtx = context.WithValue(ctx, presetKey{}, preset)
	}
	// fail ends a run refused before it started; one that was announced
	// (queued under its id) ends under that id, unless its job goes back
	// to the queue (handBackUnstarted).
	fail := func(err error) (outcome, error) {
		if in.handBackUnstarted(ctx, preset, err) {
			return outcome{}, err
		}
		if preset != nil && (preset.queued || preset.attempt > 0) {
			return outcome{}, in.endQueued(ctx, out, core.RunRecord{ID: runID, AgentID: rt.ID, SessionID: key}, err)
		}
		return outcome{}, err
	}
	var hold *sessionHold
	var err error
	var fence string
	named := key != "" && core.ValidID(key)
	if named {
		// Under the session ownership rule (core.Storage.OwnSessions),
		// another identity's session is refused before its gate, so
		// waiting on it tells nothing of that session.
		if err := in.store.CheckSession(ctx, key); err != nil {
			return fail(err)
		}
		if hold, err = in.sessions.acquire(acquireCtx, key, rt.concurrency, cancel); err != nil {
			return fail(err)
		}
		defer in.sessions.release(key, hold)
	}
	var session core.Session
	startNew := opts.Session.ID == "" && preset == nil && in.store.WritesRuns()
	if startNew {
		// A session under an id minted here: it is written with the run's
		// record and first message (see runwrites.go).
		if err := checkTags(opts.Session.Tags); err != nil {
			return fail(err)
		}
		session.ID = in.newID()
	} else if session, err = in.openSession(ctx, rt.ID, opts.Session); err != nil {
		return fail(err)
	}
	if hold == nil {
		// A new session nobody else knows yet: the claim is free.
		if hold, err = in.sessions.acquire(ctx, session.ID, rt.concurrency, cancel); err != nil {
			return fail(err)
		}
		defer in.sessions.release(session.ID, hold)
	}
	if in.stopped.Load() {
		return fail(&core.BreadError{Code: core.CodeInstanceStopping, Message: "the bread instance is stopping; retry on another replica"})
	}
	if named {
		// A session the client named may have a run on another replica; a
		// new one is this run's alone.
		fence = in.records.mint()
		claim := core.RunRecord{ID: runID, AgentID: rt.ID, SessionID: session.ID, Fence: fence}
		if preset != nil {
			claim.Attempt = preset.attempt
		}
		if err := in.claimSession(ctx, claim, rt.concurrency); err != nil {
			return fail(err)
		}
	}
	claimed := named && in.store.Has(core.StoreRuns|core.StoreRunList)
	if !claimed {
		fence = ""
	}
	if hold.undo > 0 {
		if err := in.rollback(ctx, session.ID, hold.undo); err != nil {
			return fail(err)
		}
	}
	r := in.newRun(rt, runID, session.ID, input, opts)
	r.claimed = claimed
	if fence != "" {
		r.fence = fence // its record went running with its claim, under this token
	}
	if preset != nil {
		r.jobAttempt, r.job = preset.attempt, preset
	}
	r.fresh = preset == nil
	r.derived = cancel
	if startNew {
		r.startOnNewSession(opts.Session)
	}
	return r.execute(ctx, out)
}

// persist appends messages of this run to its session.
func (r *run) persist(ctx context.Context, msgs ...core.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	if err := r.stillOurs(ctx); err != nil {
		return err
	}
	r.wrote = true
	return r.in.persist(ctx, r.sessionID, msgs...)
}

// persistStored is persist for messages encoded already.
func (r *run) persistStored(ctx context.Context, sms []core.SessionMessage) error {
	if err := r.stillOurs(ctx); err != nil {
		return err
	}
	r.wrote = true
	return r.in.persistStored(ctx, r.sessionID, sms)
}

// recordEnd writes how the run ended into its record, before the crumb
// that tells a client (human:required, agent:run:end, agent:error): a
// process killed right after that crumb leaves the record true.
//
// A resumed run's checkpoint is settled at the same point (deleted, or given
// back when the instance stops), so a client that resumes again the moment
// it sees the end finds it gone rather than still claimed.
//
// It reports false when another instance declared the run lost meanwhile:
// the caller ends the run with RUN_LOST, as its tails were told, and the
// choke point neither logs nor publishes that end.
//
// A run that holds writes back (its start, its last messages) writes them
// with its record (writeEnd); when that fails while holding messages, the
// run has not stored its answer: recordEnd returns the error without
// settling the checkpoint, and the caller fails the run, which records it
// again.
func (r *run) recordEnd(ctx context.Context, res outcome, err error) (ours bool, werr error) {
	r.recorded = true
	told := r.told
	r.told = nil
	if !r.unstarted && r.stillOurs(ctx) != nil {
		r.resumedFrom, r.start, r.last = nil, nil, nil
		r.in.quietEnds.Store(r.id, struct{}{})
		return false, nil
	}
	switch {
	case r.unstarted:
		ours = true
	case r.start != nil || len(r.last) > 0:
		if ours, werr = r.writeEnd(ctx, res, err, told); werr != nil {
			return true, werr
		}
	default:
		ours = r.endLogged(ctx, res, err, told)
	}
	if cp := r.resumedFrom; cp != nil {
		r.resumedFrom = nil
		if ours {
			r.in.records.settle(ctx, *cp, err)
		} else {
			// Taken: a sweeper put the run back to waiting for a retry of
			// this checkpoint (this resumer was paused past its lease), or
			// another resume runs it. The checkpoint is theirs; removing it
			// left a run waiting on nothing (found by the chaos harness).
			r.in.records.unclaim(ctx, *cp)
		}
	}
	return ours, nil
}

// record is the identity part of r's run record; a resumed run names the
// checkpoint it resumes from until that checkpoint is settled.
func (r *run) record() core.RunRecord {
	rec := core.RunRecord{ID: r.id, AgentID: r.agent.ID, SessionID: r.sessionID, Attempt: r.jobAttempt, Fence: r.fence}
	if r.resumedFrom != nil {
		rec.CheckpointID = r.resumedFrom.ID
	}
	return rec
}

func (in *Instance) newRun(rt *agentRT, runID, sessionID string, input any, opts core.RunOptions) *run {
	r := &run{
		in: in, agent: rt, id: runID, sessionID: sessionID, input: input, opts: opts, heldSince: in.nowMillis(), fence: in.records.mint(),
		hooks: in.chain(rt.Hooks), started: time.Now(),
	}
	if opts.Skill != "" {
		r.skills = map[string]bool{opts.Skill: true}
	}
	return r
}

func (rt *agentRT) validateInput(input any) error {
	if rt.CheckInput != nil {
		return rt.CheckInput(input)
	}
	if rt.input == nil {
		return nil // no schema: no label to build for an error
	}
	return rt.input.validate("input of agent "+rt.ID, input)
}

// execute runs the agent from its first turn: BeforeRun, agent:run:start,
// the user message, then the model loop.
func (r *run) execute(ctx context.Context, out sink) (outcome, error) {
	// The run whose context this one starts in is its parent (bind marks
	// ctx with this run from here on).
	if p, ok := RunFromContext(ctx); ok && p.RunID != r.id {
		r.parentRunID = p.RunID
	}
	ctx, done := r.bind(ctx, out)
	defer done()

	if r.opts.Skill != "" {
		if _, ok := r.agent.Skill(r.opts.Skill); !ok {
			return outcome{}, r.fail(ctx, skillNotFound(r.agent, r.opts.Skill))
		}
	}
	if err := r.opts.Client.Validate(); err != nil {
		return outcome{}, r.fail(ctx, err)
	}
	if r.start != nil && (r.hooks.hasBefore() || r.opts.Client.HasState()) {
		// A hook may read the session, and a client's state is stored
		// with it: it exists before either.
		if err := r.writeStart(ctx, nil); err != nil {
			return outcome{}, r.fail(ctx, err)
		}
	}
	if err := r.applyClientState(ctx); err != nil {
		return outcome{}, r.fail(ctx, err)
	}
	input, short, err := r.hooks.before(ctx, r.hookContext(core.HookAgent), r.input)
	if err != nil {
		return outcome{}, r.fail(ctx, err)
	}
	r.input = input
	user := core.Message{Role: core.RoleUser, Parts: []core.Part{core.TextPart(inputText(input))}}
	var pair [2]core.Message // the user's message, and a short-circuit's reply
	pair[0] = user
	msgs := pair[:1]
	if short != nil {
		// A short-circuit is a normal completion without the model: it is
		// persisted and still followed by AfterRun.
		reply, err := json.Marshal(short.Output)
		if err != nil {
			return outcome{}, r.fail(ctx, err)
		}
		msgs = append(msgs, core.Message{Role: core.RoleAssistant, Parts: []core.Part{core.TextPart(string(reply))}})
	}
	if f, ok := r.out.(freshSink); ok && r.fresh {
		f.fresh(r.id, r.agent.ID, r.sessionID)
	}
	start := &core.AgentRunStart{CrumbBase: r.base(), Input: input, Skill: r.opts.Skill, ParentRunID: r.parentRunID}
	if r.start != nil {
		// The session, the record and the messages in one write, before
		// agent:run:start names the session to a client (and with its
		// log entry, where the store allows).
		if err := r.writeStart(ctx, start, msgs...); err != nil {
			return outcome{}, r.fail(ctx, err)
		}
		msgs = nil
	}
	if !r.emit(start) {
		return outcome{}, r.fail(ctx, errConsumerGone)
	}
	if err := r.persist(ctx, msgs...); err != nil {
		return outcome{}, r.fail(ctx, err)
	}
	if short != nil {
		return r.finish(ctx, short.Output)
	}
	if r.opts.Session.ID == "" {
		// openSession minted the session's id just now: it holds this
		// message alone.
		r.known = []core.Message{user}
	}
	return r.continueRun(ctx)
}

// bind derives the run's cancellable context, registers it for Cancel and
// attaches the sink. The returned func releases both.
func (r *run) bind(ctx context.Context, out sink) (context.Context, func()) {
	cancel := r.derived
	if cancel == nil {
		ctx, cancel = context.WithCancelCause(ctx)
	}
	ctx, unobserve := r.observe(ctx)
	if !r.opts.Client.IsZero() {
		ctx = core.WithClientInput(ctx, r.opts.Client)
	}
	r.cancel, r.out = cancel, out
	untrack := r.in.trackRun(r.id, cancel)
	r.recorded = false
	switch {
	case r.claimed:
		// A claimed run's record went running with its claim; writing it
		// again would move its place among the session's claims.
	case r.start != nil:
		if r.in.records.keeps {
			r.startRecord = r.in.records.runningRecord(ctx, r.record())
			r.start.Run = &r.startRecord
		}
	case r.heldFence != nil:
		r.lostAtTake = !r.in.records.take(ctx, r.record(), *r.heldFence)
	default:
		r.in.records.running(ctx, r.record())
	}
	if r.fence != "" {
		// Every durable write of the run from here on is made under its
		// token: once another instance takes the run, the store refuses
		// them (RUN_TAKEN), whenever this one was paused.
		ctx = core.WithRunFence(ctx, core.RunFence{RunID: r.id, Token: r.fence})
		r.in.fences.Store(r.id, r.fence)
	}
	return ctx, func() {
		if !r.recorded {
			// Every way a run ends records it; this is the net for one that
			// did not, so its lease is not renewed for ever.
			_, _ = r.recordEnd(ctx, outcome{}, &core.BreadError{Code: core.CodeInternalError, Message: "the run ended without a recorded outcome"})
		}
		untrack()
		if r.fence != "" {
			r.in.fences.CompareAndDelete(r.id, r.fence)
		}
		cancel(nil)
		unobserve()
	}
}

// continueRun drives the model loop with the agent-scope OnError chain and
// retry policy around it. It is shared by a first run and a resumed one. A
// loop the agent left open is closed when the run ends, however it ends.
func (r *run) continueRun(ctx context.Context) (outcome, error) {
	rs := newRetryState(r.retryPolicy())
	for {
		res, err := r.attempt(ctx)
		if err == nil {
			if res.suspended {
				return res, nil
			}
			r.closeLoop(ctx, false)
			return r.finish(ctx, res.output)
		}
		if cause := r.cancelCause(ctx); cause != nil {
			r.closeLoop(ctx, true)
			return outcome{}, r.fail(ctx, cause)
		}
		if fenced(err) {
			// Another instance took the run: nothing of this attempt is
			// retried or handed to a hook.
			return outcome{}, r.fail(ctx, err)
		}
		be := core.AsBreadError(err, core.CodeAgentError)
		hr, herr := r.hooks.onError(ctx, r.hookContext(core.HookAgent), r.input, be)
		if herr != nil {
			r.closeLoop(ctx, true)
			return outcome{}, r.fail(ctx, herr)
		}
		switch o, final := rs.decide(hr, be); o {
		case decideRecover:
			r.closeLoop(ctx, false)
			return r.finish(ctx, rs.recovered)
		case decideFail:
			r.closeLoop(ctx, true)
			return outcome{}, r.fail(ctx, final)
		}
		if err := rs.wait(ctx); err != nil {
			r.closeLoop(ctx, true)
			return outcome{}, r.fail(ctx, r.cancelCause(ctx))
		}
	}
}

func (r *run) retryPolicy() *core.RetryPolicy {
	if p := r.agent.ErrorHandling.Retry; p != nil {
		return p
	}
	return r.in.cfg.ErrorHandling.Retry
}

// cancelCause returns why ctx was cancelled, or nil if it was not.
func (r *run) cancelCause(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	if cause := context.Cause(ctx); cause != nil {
		var be *core.BreadError
		if errors.As(cause, &be) {
			return be
		}
		return core.AsBreadError(cause, core.CodeRunCancelled)
	}
	return core.ErrRunCancelled
}

// finish runs the AfterRun chain and ends the run with agent:run:end.
func (r *run) finish(ctx context.Context, output any) (outcome, error) {
	output, err := r.hooks.after(ctx, r.hookContext(core.HookAgent), r.input, output, time.Since(r.started))
	if err != nil {
		return outcome{}, r.fail(ctx, err)
	}
	var end *core.AgentRunEnd
	var room *endWithUsage
	if r.usage != (core.Usage{}) && len(r.calls) == 1 {
		room = &endWithUsage{}
		end = &room.end
	} else {
		end = &core.AgentRunEnd{}
	}
	*end = core.AgentRunEnd{CrumbBase: r.base(), Output: output, DurationMs: time.Since(r.started).Milliseconds(), Files: r.files}
	switch {
	case room != nil:
		room.usage = [2]core.Usage{r.usage, r.calls[0]}
		end.Usage, end.ModelCalls = &room.usage[0], room.usage[1:2:2]
	case r.usage != (core.Usage{}):
		end.Usage, end.ModelCalls = r.endUsage()
	}
	// Built before the end's write, which may log it (writeEnd).
	r.told = end
	ours, werr := r.recordEnd(ctx, outcome{output: output}, nil)
	if werr != nil {
		return outcome{}, r.fail(ctx, werr)
	}
	if !ours {
		c, be := r.in.errorCrumb(r.base(), errLeaseLost)
		r.out.end(c, be)
		return outcome{}, be
	}
	r.out.end(end, nil)
	return outcome{output: output}, nil
}

// endWithUsage is the agent:run:end of a run of one model call and its
// usage (the run's, then the call's) in one allocation: the memory store
// keeps the end for as long as the run's log, so it is also one object
// fewer for the collector to mark on every cycle for each run it keeps.
type endWithUsage struct {
	end   core.AgentRunEnd
	usage [2]core.Usage
}

// endUsage is the run's usage and its calls' for its agent:run:end, in
// memory of their own: a crumb log that keeps crumbs as values (the memory
// store's) keeps the end as long as the run's log, and a pointer into the
// run (r.oneCall) would keep the run's whole state alive with it, its
// request and contexts included (about 8 KB a run). A run of one call
// gets both in one allocation.
func (r *run) endUsage() (*core.Usage, []core.Usage) {
	if len(r.calls) == 1 {
		both := &[2]core.Usage{r.usage, r.calls[0]}
		return &both[0], both[1:2:2]
	}
	usage := r.usage
	// The run appends no call after its end, and the array of several
	// calls is append's, not the run's: the crumb may share it (capped,
	// so nobody appends into it).
	return &usage, r.calls[:len(r.calls):len(r.calls)]
}

// fail ends the run with agent:error and returns the error.
func (r *run) fail(ctx context.Context, err error) error {
	if cause := r.cancelCause(ctx); cause != nil && !errors.Is(err, core.ErrRunCancelled) {
		err = cause
	}
	if fenced(err) {
		// Another instance has the run now (it declared it lost, or resumed
		// its checkpoint again): nothing more of this attempt is written,
		// and its end is its caller's alone.
		r.recorded, r.resumedFrom, r.start, r.last = true, nil, nil, nil
		r.in.quietEnds.Store(r.id, struct{}{})
		c, be := r.in.errorCrumb(r.base(), errLeaseLost) // a store's RUN_TAKEN is the run's loss to its caller
		r.out.end(c, be)
		return be
	}
	if r.stoppedBackground(err) {
		if r.handOver(ctx) {
			c, be := r.in.errorCrumb(r.base(), err)
			r.out.end(c, be) // its caller's alone: neither logged nor published
			return be
		}
		err = errStoppedLost
	}
	c, be := r.in.errorCrumb(r.base(), err)
	if be.Code != core.CodeRunCancelled {
		attrs := append(runAttrs(r.id, r.agent.ID, r.sessionID), "code", be.Code)
		if be.Cause != nil {
			// What the client does not see (a signer's refusal behind
			// REMOTE_AGENT_ERROR, a provider's own message) is the operator's.
			attrs = append(attrs, "cause", be.Cause.Error())
		}
		r.in.log.Warn("bread: run failed", attrs...)
	}
	if r.wrote && (r.resumedFrom == nil || !stoppedByInstance(err)) {
		// Only a session this attempt touched needs closing: a resume cut
		// short before it answered leaves the pending call for its retry,
		// and so does one whose instance stopped (its checkpoint is given
		// back, and the retry continues the session where it stands).
		r.in.closeInterrupted(ctx, r.sessionID, 0, be.Code)
	}
	// Built before the end's write, which may log it (endLogged).
	r.told = c
	if ours, _ := r.recordEnd(ctx, outcome{}, be); !ours && be.Code != core.CodeRunLost {
		c, be = r.in.errorCrumb(r.base(), errLeaseLost)
	}
	r.out.end(c, be)
	return be
}

// emit passes a crumb on; when the consumer has gone, it cancels the run so
// the model call and tools stop, and reports false.
func (r *run) emit(c core.Crumb) bool {
	switch v := c.(type) {
	case *foldRequest:
		// A delegated run's end write, through its tool's door: folded
		// here, on the run's goroutine, after the crumbs the door passed
		// before it (delegatedSink).
		v.reply <- foldThrough(r.out, v.Crumb, false)
		return true
	case *settleRequest:
		settleThrough(r.out, v.Crumb, v.entries, v.committed)
		return true
	}
	if r.out.put(c) {
		return true
	}
	r.cancel(errConsumerGone)
	return false
}

func (r *run) base() core.CrumbBase {
	return core.CrumbBase{AgentID: r.agent.ID, RunID: r.id, SessionID: r.sessionID, Timestamp: core.NowMillis()}
}

func (r *run) hookContext(scope core.HookScope) core.HookContext {
	return core.HookContext{Scope: scope, AgentID: r.agent.ID, RunID: r.id, SessionID: r.sessionID, Skill: r.opts.Skill}
}

// openSession continues the session named in opts, or creates one (with
// that id, when given).
func (in *Instance) openSession(ctx context.Context, agentID string, opts core.SessionOptions) (core.Session, error) {
	if opts.ID != "" {
		// A client chooses this id: bound it before it reaches the store,
		// a log line or a URL.
		if !core.ValidID(opts.ID) {
			return core.Session{}, &core.BreadError{Code: core.CodeValidationError,
				Message: "session id must use letters, digits, '_', '-' or '.', start with a letter or digit and be at most 128 bytes"}
		}
		s, err := in.store.GetSession(ctx, opts.ID)
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, core.ErrSessionNotFound) {
			return core.Session{}, err
		}
	}
	if err := checkTags(opts.Tags); err != nil {
		return core.Session{}, err
	}
	return in.store.CreateSession(ctx, core.NewSession{ID: opts.ID, Tags: opts.Tags, AgentID: agentID})
}

// Bounds of the tags a client gives a new session.
const (
	maxSessionTags     = 64
	maxSessionTagKey   = 128
	maxSessionTagValue = 1024
)

// checkTags bounds a new session's client-chosen tags.
func checkTags(tags map[string]string) error {
	if len(tags) > maxSessionTags {
		return core.Errorf(core.CodeValidationError, "a session has at most %d tags, not %d", maxSessionTags, len(tags))
	}
	for k, v := range tags {
		if k == "" || len(k) > maxSessionTagKey || len(v) > maxSessionTagValue {
			return core.Errorf(core.CodeValidationError, "session tag keys are 1-%d bytes and values at most %d bytes", maxSessionTagKey, maxSessionTagValue)
		}
	}
	return nil
}

// history reads a session's persisted messages back into model messages.
func (in *Instance) history(ctx context.Context, sessionID string) ([]core.Message, error) {
	stored, err := in.store.GetMessages(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	out := make([]core.Message, 0, len(stored)+1)
	for _, m := range stored {
		var msg core.Message
		if err := json.Unmarshal(m.Content, &msg); err != nil {
			return nil, core.Errorf(core.CodeStoreError, "session %s holds a malformed message %s: %w", sessionID, m.ID, err)
		}
		out = append(out, msg)
	}
	return out, nil
}

// persist appends messages to a session in order. Several go in one atomic
// append (SuspendRun without checkpoints), so a process that dies midway
// never leaves a tool call recorded without its result.
func (in *Instance) persist(ctx context.Context, sessionID string, msgs ...core.Message) error {
	sms, err := toSessionMessages(msgs)
	if err != nil {
		return err
	}
	return in.persistStored(ctx, sessionID, sms)
}

// persistStored is persist for messages encoded already.
func (in *Instance) persistStored(ctx context.Context, sessionID string, sms []core.SessionMessage) error {
	var err error
	switch len(sms) {
	case 0:
		return nil
	case 1:
		err = in.store.AddMessage(ctx, sessionID, sms[0])
	default:
		err = in.store.SuspendRun(ctx, sessionID, sms)
	}
	if err != nil {
		return err
	}
	in.sessions.wrote(sessionID, len(sms))
	return nil
}

func toSessionMessage(m core.Message) (core.SessionMessage, error) {
	content, ok := appendMessageJSON(nil, m)
	if !ok {
		var err error
		if content, err = json.Marshal(m); err != nil {
			return core.SessionMessage{}, err
		}
	}
	return core.SessionMessage{Role: m.Role, Content: content, Timestamp: core.NowMillis()}, nil
}

// appendMessageJSON appends m as json.Marshal writes it when every part is
// text alone (a type and a text: what a run's input and a plain answer
// are), and reports false, appending nothing, for any other part (tool
// calls and results, files), which go through json.Marshal. json.Marshal
// by reflection was the larger part of a short run's session writes.
func appendMessageJSON(dst []byte, m core.Message) ([]byte, bool) {
	size := len(`{"role":,"parts":[]}`) + len(m.Role) + 2
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.ToolCallID != "" || p.ToolName != "" || p.Input != nil || p.Output != nil || p.IsError ||
			p.MediaType != "" || p.Data != nil || p.URL != "" || p.Filename != "" {
			return dst, false
		}
		size += len(`{"type":,"text":},`) + len(p.Type) + len(p.Text) + 4
	}
	if dst == nil {
		dst = make([]byte, 0, size)
	}
	dst = append(dst, `{"role":`...)
	dst = protocol.AppendJSONString(dst, string(m.Role))
	if m.Parts == nil {
		return append(dst, `,"parts":null}`...), true
	}
	dst = append(dst, `,"parts":[`...)
	for i := range m.Parts {
		p := &m.Parts[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":`...)
		dst = protocol.AppendJSONString(dst, string(p.Type))
		if p.Text != "" {
			dst = append(dst, `,"text":`...)
			dst = protocol.AppendJSONString(dst, p.Text)
		}
		dst = append(dst, '}')
	}
	return append(dst, "]}"...), true
}

// inputText is how a run's input reaches the model: a string as is,
// anything else as JSON (core.JSONText).
func inputText(input any) string {
	s, _ := core.JSONText(input)
	return s
}

// newID mints a UUIDv7 for a run, a session, a checkpoint or a loop:
// unique, and sortable by creation time.
func (in *Instance) newID() string { return core.NewUUIDv7() }
