package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"

	"github.com/breadai/bread/core"
)

// background owns the goroutines of runs started in the background and of
// their webhook deliveries. Stop refuses new ones, waits for those running
// until its context ends, then cancels what is left.
type background struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
	ctx    context.Context // cancelled when Stop gives up waiting
	cancel context.CancelFunc
}

func newBackground() *background {
	ctx, cancel := context.WithCancel(context.Background())
	return &background{ctx: ctx, cancel: cancel}
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

// stop refuses new goroutines and waits for the running ones until ctx
// ends; then it cancels them and returns ctx's error without waiting more.
func (b *background) stop(ctx context.Context) error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	done := make(chan struct{})
	go func() {
		b.wg.Wait()
		close(done)
	}()
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

// RunBackground starts agentID on input on a goroutine the Instance owns
// and returns once the run has its id (see core.Detacher). The run keeps
// ctx's values (the caller's identity, so the run's record names its
// starter) but not its cancellation: Cancel ends it, and so does Stop,
// which waits for it like any run. A refused run (SESSION_BUSY,
// INSTANCE_STOPPING, an unknown agent, an invalid input) returns the
// refusal and runs nothing.
//
// Under the enqueue busy-session policy the run has no id until it holds
// its session, so RunBackground returns only then.
//
// With bg.Webhook, the run's record is POSTed to it when the run ends or
// suspends (see WebhookOptions); a webhook this Instance would not call
// (no secret configured, a refused address) is VALIDATION_ERROR before the
// run starts.
func (in *Instance) RunBackground(ctx context.Context, agentID string, input any, opts core.RunOptions, bg core.BackgroundOptions) (core.Detached, error) {
	var hook *webhook
	if bg.Webhook != "" {
		var err error
		if hook, err = in.newWebhook(bg.Webhook); err != nil {
			return core.Detached{}, err
		}
	}
	return in.detach(ctx, hook, func(ctx context.Context) iter.Seq2[core.Crumb, error] {
		return in.Run(ctx, agentID, input, opts)
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
func (in *Instance) detach(ctx context.Context, hook *webhook, crumbs func(context.Context) iter.Seq2[core.Crumb, error]) (core.Detached, error) {
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
		if hook != nil {
			hook.send(in, d, last)
		}
	})
	if !ok {
		cancel(nil)
		return core.Detached{}, &core.BreadError{Code: core.CodeInstanceStopping, Message: "the bread instance is stopping; retry on another replica"}
	}
	s := <-first
	return s.d, s.err
}
