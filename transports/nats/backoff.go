package nats

import (
	"context"
	"math/rand/v2"
	"time"
)

// backoff is capped exponential backoff with jitter, so replicas that lost
// NATS together do not reconnect in lockstep.
type backoff struct {
	min, max time.Duration
	next     time.Duration
}

func newBackoff() backoff { return backoff{min: 50 * time.Millisecond, max: 2 * time.Second} }

func (b *backoff) reset() { b.next = 0 }

// delay returns the next wait: min, 2*min, ... up to max, each with up to
// 50% jitter subtracted.
func (b *backoff) delay() time.Duration {
	if b.next == 0 {
		b.next = b.min
	}
	d := b.next
	b.next = min(b.next*2, b.max)
	return d - rand.N(d/2+1)
}

// sleep waits d or until done closes; it reports whether d elapsed.
func sleep(done <-chan struct{}, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-done:
		return false
	}
}

// sleepCtx is sleep for a context.
func sleepCtx(ctx context.Context, d time.Duration) bool { return sleep(ctx.Done(), d) }
