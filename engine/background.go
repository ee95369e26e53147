package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine/webhook"
)

// background owns the goroutines of runs started in the background and of
// their webhook deliveries. Stop refuses new ones, waits for those running
// until its context ends, then cancels what is left.
type background struct {
	mu     sync.Mutex
	closed bool
	// webhooks delivers every webhook of the Instance through one guarded
	// client; Stop closes it, so deliveries make no more retries.
	webhooks *webhook.Sender
	wg       sync.WaitGroup
	ctx      context.Context // cancelled when Stop gives up waiting
	cancel   context.CancelFunc
}

func newBackground(webhooks *webhook.Sender) *background {
	ctx, cancel := context.WithCancel(context.Background())
	return &background{ctx: ctx, cancel: cancel, webhooks: webhooks}
}

// goFn runs fn on a goroutine the Instance owns; false once Stop has begun.
func (b *background) goFn(fn func()) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		fn()
	}()
	return true
}

// stop refuses new goroutines, tells webhook deliveries to make no more
// retries, and waits for the running ones until ctx ends; then it cancels
// them and returns ctx's error without waiting more.
func (b *background) stop(ctx context.Context) error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.webhooks.Close()
	done := make(chan struct{})
	go func() {
		b.wg.Wait()
		close(done)
	}()
	// Deliveries that ended while Stop waited left their connections
	// idle: closing again drops them, so their goroutines end with the
	// Instance.
	defer b.webhooks.Close()
	select {
	case <-done:
		b.cancel()
		return nil
	case <-ctx.Done():
		b.cancel()
		return fmt.Errorf("bread: background runs or webhooks still ending when Stop's context ended: %w", ctx.Err())
	}
}

var _ core.Detacher = (*Instance)(nil)

// RunBackground starts agentID on input in the background (see
// core.Detacher).
//
// With Config.Jobs, the run is checked (agent, input, webhook), its session
// opened and its record written as queued, then it is enqueued and
// RunBackground returns: a worker on any replica sharing the queue starts
// it, keeping the caller's identity. Refusals that depend on the moment it
// starts (SESSION_BUSY) end it then, in its record and its stream.
// CancelQueued ends it while it waits.
//
// Without, it runs on a goroutine the Instance owns and RunBackground
// returns once the run has its id. The run keeps
// ctx's values (the caller's identity, so the run's record names its
// starter) but not its cancellation: Cancel ends it, and so does Stop,
// which waits for it like any run. A refused run (SESSION_BUSY,
// INSTANCE_STOPPING, an unknown agent, an invalid input) returns the
// refusal and runs nothing.
//
// A run that must wait for its session (the enqueue, interrupt and
// rollback busy-session policies) answers at once too, with the id it will
// run under: while it waits, Cancel ends it before it starts (its record
// says cancelled and its one crumb is agent:error RUN_CANCELLED), and it
// has no record until then.
//
// With bg.Webhook, the run's record is POSTed to it when the run ends or
// suspends (see WebhookOptions); a webhook this Instance would not call
// (no secret configured, a refused address) is VALIDATION_ERROR before the
// run starts.
func (in *Instance) RunBackground(ctx context.Context, agentID string, input any, opts core.RunOptions, bg core.BackgroundOptions) (core.Detached, error) {
	if in.jobs != nil {
		return in.enqueueRun(ctx, in.newID(), agentID, input, opts, bg)
	}
	return in.runBackground(ctx, in.newID(), agentID, input, opts, bg)
}

// runBackground starts a background run under runID on an Instance-owned
// goroutine (no job queue configured).
func (in *Instance) runBackground(ctx context.Context, runID, agentID string, input any, opts core.RunOptions, bg core.BackgroundOptions) (core.Detached, error) {
	if bg.Webhook != "" {
		if err := in.checkWebhook(ctx, bg.Webhook); err != nil {
			return core.Detached{}, err
		}
	}
	preset := &presetRun{runID: runID}
	ctx = withWebhook(ctx, bg.Webhook)
	return in.detach(ctx, bg.Webhook, preset, func(ctx context.Context) iter.Seq2[core.Crumb, error] {
		return in.Run(context.WithValue(ctx, presetKey{}, preset), agentID, input, opts)
	})
}

// errNoCrumbs ends a background run whose stream yielded nothing.
var errNoCrumbs = errors.New("bread: the background run produced no crumbs")

type started struct {
	d   core.Detached
	err error
}

// detach drains crumbs on an owned goroutine. The first crumb that names a
// run answers the caller; a first crumb paired with an error is the run's
// refusal. When the stream ends, hook (if any) is sent the run's record.
//
// With preset, a run that must wait for its session answers the caller at
// once with its preset id (see presetRun).
func (in *Instance) detach(ctx context.Context, hook string, preset *presetRun, crumbs func(context.Context) iter.Seq2[core.Crumb, error]) (core.Detached, error) {
	// The request's values stay; its cancellation does not. Stop cancels
	// the run once it is tracked (Cancel); before that (waiting for its
	// session), the background's own context does.
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	first := make(chan started, 1)
	ok := in.bg.goFn(func() {
		defer cancel(nil)
		stopAfter := context.AfterFunc(in.bg.ctx, func() { cancel(ErrInstanceStopped) })
		defer stopAfter()
		var d core.Detached
		var last core.Crumb
		sent := false
		if preset != nil {
			// Called on this goroutine, inside the range below.
			preset.onWait = func(sessionID string) {
				if !sent {
					d = core.Detached{RunID: preset.runID, SessionID: sessionID}
					first <- started{d: d}
					sent = true
				}
			}
		}
		for c, err := range crumbs(runCtx) {
			if c != nil {
				last = c
			}
			if sent {
				continue
			}
			switch {
			case c != nil && c.Base().RunID != "":
				d = core.Detached{RunID: c.Base().RunID, SessionID: c.Base().SessionID}
				first <- started{d: d}
				sent = true
			case err != nil:
				first <- started{err: err}
				sent = true
			}
		}
		if !sent {
			first <- started{err: errNoCrumbs}
			return
		}
		if hook != "" {
			in.deliver(hook, d, last)
		}
	})
	if !ok {
		cancel(nil)
		return core.Detached{}, &core.BreadError{Code: core.CodeInstanceStopping, Message: "the bread instance is stopping; retry on another replica"}
	}
	s := <-first
	return s.d, s.err
}

// presetKey carries a background run's presetRun to runTop, which takes it
// off the context so no run started inside reuses the id.
type presetKey struct{}

// presetRun is a background run's id, chosen before it starts, and the
// hook that answers the caller when the run must wait for its session.
type presetRun struct {
	runID   string
	attempt int // a queued run's attempt (core.RunRecord.Attempt)
	onWait  func(sessionID string)
	queued  bool // the run waited for its session
	// handedBack is set when a stop handed the run back to the job queue
	// (handOver), or the instance refused to start it (handBackUnstarted),
	// on the goroutine that ranges over the run's stream: its job is
	// snoozed.
	handedBack bool
}

func presetFrom(ctx context.Context) *presetRun {
	p, _ := ctx.Value(presetKey{}).(*presetRun)
	return p
}

// waiting is called by the session gate, on the run's goroutine, when the
// run queues for sessionID.
func (p *presetRun) waiting(sessionID string) {
	p.queued = true
	if p.onWait != nil {
		p.onWait(sessionID)
	}
}

// trackQueued lets Cancel (and Stop) reach a run waiting for its session.
func (in *Instance) trackQueued(runID string, cancel context.CancelCauseFunc) (untrack func()) {
	in.runsMu.Lock()
	in.runs[runID] = cancel
	in.runsMu.Unlock()
	return func() {
		in.runsMu.Lock()
		delete(in.runs, runID)
		in.runsMu.Unlock()
	}
}

// endQueued ends a background run that gave up waiting for its session
// (cancelled, or the instance stopped) before it started: its record and
// its one durable crumb, agent:error under its own id, so its tails, its
// record and its webhook all see it end.
func (in *Instance) endQueued(ctx context.Context, out sink, rec core.RunRecord, err error) error {
	if cause := context.Cause(ctx); cause != nil {
		err = cause
	}
	c, be := in.errorCrumb(core.CrumbBase{RunID: rec.ID, AgentID: rec.AgentID, SessionID: rec.SessionID}, err)
	rec.CreatedAt = core.NowMillis()
	rec.StartedBy = core.OwnerKey(core.IdentityFrom(ctx))
	in.records.ended(ctx, rec, outcome{}, be)
	out.end(c, be)
	return be
}
