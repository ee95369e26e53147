package engine

import (
	"context"
	"time"

	"github.com/breadai/bread/core"
)

// hookChain is the ordered hooks of one run: the scoped hooks, then plugin
// hooks in registration order, then Config.Hooks.
type hookChain []core.Hooks

// chain builds the chain for a run whose own hooks are scoped.
func (in *Instance) chain(scoped core.Hooks) hookChain {
	c := make(hookChain, 0, len(in.pluginHooks)+2)
	c = append(c, scoped)
	c = append(c, in.pluginHooks...)
	return append(c, in.cfg.Hooks)
}

// before runs BeforeRun hooks: an override feeds forward as the next hook's
// input; the first short-circuit stops the chain.
func (c hookChain) before(ctx context.Context, hc core.HookContext, input any) (any, *core.BeforeRunResult, error) {
	for _, h := range c {
		if h.BeforeRun == nil {
			continue
		}
		res, err := h.BeforeRun(ctx, hc, input)
		if err != nil {
			return input, nil, err
		}
		if res == nil {
			continue
		}
		if res.Action == core.ShortCircuit {
			return input, res, nil
		}
		input = res.Input
	}
	return input, nil, nil
}

// after runs every AfterRun hook; each replacement feeds forward.
func (c hookChain) after(ctx context.Context, hc core.HookContext, input, output any, d time.Duration) (any, error) {
	for _, h := range c {
		if h.AfterRun == nil {
			continue
		}
		res, err := h.AfterRun(ctx, hc, input, output, d)
		if err != nil {
			return output, err
		}
		if res != nil {
			output = res.Output
		}
	}
	return output, nil
}

// onError returns the first opinion of the OnError hooks, or nil.
func (c hookChain) onError(ctx context.Context, hc core.HookContext, input any, failure *core.BreadError) (*core.OnErrorResult, error) {
	for _, h := range c {
		if h.OnError == nil {
			continue
		}
		res, err := h.OnError(ctx, hc, input, failure)
		if err != nil || res != nil {
			return res, err
		}
	}
	return nil, nil
}

// onSuspend calls every OnSuspend hook.
func (c hookChain) onSuspend(ctx context.Context, hc core.HookContext, toolName, checkpointID string) {
	for _, h := range c {
		if h.OnSuspend != nil {
			h.OnSuspend(ctx, hc, toolName, checkpointID)
		}
	}
}

// retryState decides, attempt after attempt, what a failure leads to.
//
// With a retry policy, a failure is retried (when every hook has no opinion,
// or a hook asks for it) until Attempts is reached; then the last error wins
// whatever the hooks say. Without a policy, only a hook's explicit Retry
// retries, exactly once and without backoff.
type retryState struct {
	policy    *core.RetryPolicy
	attempt   int
	delay     time.Duration
	usedFree  bool
	recovered any
}

func newRetryState(p *core.RetryPolicy) *retryState {
	rs := &retryState{policy: p, attempt: 1}
	if p != nil {
		rs.delay = time.Duration(p.BackoffMs) * time.Millisecond
		if p.BackoffMs <= 0 {
			rs.delay = 500 * time.Millisecond
		}
	}
	return rs
}

// decision is what one failure leads to.
type decision uint8

const (
	decideFail decision = iota
	decideRetry
	decideRecover
)

// decide turns a hook resolution into an outcome and the error that stands
// when the outcome is decideFail.
func (rs *retryState) decide(res *core.OnErrorResult, failure *core.BreadError) (decision, *core.BreadError) {
	if failure != nil && failure.Code == core.CodeDelegationDepth {
		// Neither retried nor recovered: either would run the chain that
		// went too deep again.
		return decideFail, failure
	}
	if res != nil {
		switch res.Action {
		case core.Recover:
			rs.recovered = res.Output
			return decideRecover, nil
		case core.Fail:
			if res.Error != nil {
				return decideFail, res.Error
			}
			return decideFail, failure
		}
	}
	explicitRetry := res != nil && res.Action == core.Retry
	if rs.policy != nil {
		if (explicitRetry || res == nil) && rs.attempt < rs.policy.Attempts {
			return decideRetry, nil
		}
		return decideFail, failure
	}
	if explicitRetry && !rs.usedFree {
		rs.usedFree = true
		return decideRetry, nil
	}
	return decideFail, failure
}

// wait sleeps the backoff before the next attempt (none without a policy)
// and advances the attempt count. It returns ctx's error if cancelled.
func (rs *retryState) wait(ctx context.Context) error {
	rs.attempt++
	if rs.policy == nil {
		return ctx.Err()
	}
	t := time.NewTimer(rs.delay)
	defer t.Stop()
	mult := rs.policy.BackoffMultiplier
	if mult <= 0 {
		mult = 2
	}
	rs.delay = time.Duration(float64(rs.delay) * mult)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// hasBefore reports whether a BeforeRun hook is in the chain.
func (c hookChain) hasBefore() bool {
	for _, h := range c {
		if h.BeforeRun != nil {
			return true
		}
	}
	return false
}

// hasAfter reports whether an AfterRun hook is in the chain.
func (c hookChain) hasAfter() bool {
	for _, h := range c {
		if h.AfterRun != nil {
			return true
		}
	}
	return false
}
