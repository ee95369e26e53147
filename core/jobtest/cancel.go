package jobtest

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

// cancelQueued: CancelJob of a queued job (enqueued before Start, or
// waiting out a snooze on a started queue) returns it and the job never
// runs; the key is free again afterwards.
func (s *suite) cancelQueued(t *testing.T) {
	q := s.newQueue(t)
	l := newLog()
	ctx := t.Context()
	queued := core.Job{Kind: kindEcho, Key: "queued", Payload: json.RawMessage(`{"q":1}`)}
	q.enqueue(queued)
	got, err := q.CancelJob(ctx, "queued")
	if err != nil || got == nil {
		t.Fatalf("CancelJob of a queued job = %v, %v; want the job", got, err)
	}
	if got.Kind != queued.Kind || got.Key != queued.Key || !jsonEqual(got.Payload, queued.Payload) {
		t.Errorf("CancelJob returned %+v (payload %s), want the job enqueued, %+v", got, got.Payload, queued)
	}
	if got, err := q.CancelJob(ctx, "queued"); err != nil || got != nil {
		t.Errorf("CancelJob of a cancelled job = %+v, %v; want nil, nil", got, err)
	}
	const snooze = 3 * time.Second
	q.start(&worker{log: l, handle: func(_ context.Context, j core.Job) error {
		if j.Key == "snoozing" {
			return &core.JobSnooze{After: snooze}
		}
		return nil
	}})
	q.enqueue(core.Job{Kind: kindEcho, Key: "snoozing"})
	first := l.waitCount(t, s.h.Wait, "snoozing", 1)[0]
	// The queue records the snooze after WorkJob returns; until then the
	// job is running and CancelJob rightly finds nothing to cancel.
	cancelled := false
	for deadline := time.Now().Add(2 * time.Second); !cancelled && time.Now().Before(deadline); {
		got, err := q.CancelJob(ctx, "snoozing")
		if err != nil {
			t.Fatalf("CancelJob of a snoozed job: %v", err)
		}
		if cancelled = got != nil; !cancelled {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if !cancelled {
		t.Fatal("CancelJob of a job waiting out its snooze stayed false for 2s")
	}
	if wait := time.Until(first.at.Add(snooze)); wait > 0 {
		time.Sleep(wait)
	}
	time.Sleep(s.h.Quiet)
	if c := l.of("snoozing"); len(c) != 1 {
		t.Errorf("a cancelled snoozed job ran again: %s", describe(c))
	}
	if c := l.of("queued"); len(c) != 0 {
		t.Errorf("a job cancelled before Start ran: %s", describe(c))
	}
	q.enqueue(core.Job{Kind: kindEcho, Key: "queued"}) // the key is free again
	l.waitCount(t, s.h.Wait, "queued", 1)
	q.stopNow()
}

// cancelRunningOrUnknown: CancelJob of a running job is nil and leaves it
// running (its context is not cancelled); of an unknown or finished key it
// is nil.
func (s *suite) cancelRunningOrUnknown(t *testing.T) {
	q := s.newQueue(t)
	l := newLog()
	ctx := t.Context()
	if got, err := q.CancelJob(ctx, "never-enqueued"); err != nil || got != nil {
		t.Errorf("CancelJob of an unknown key = %+v, %v; want nil, nil", got, err)
	}
	release := make(chan struct{})
	var ctxCancelled atomic.Bool
	q.start(&worker{log: l, handle: func(ctx context.Context, j core.Job) error {
		if j.Key != "running" {
			return nil
		}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			ctxCancelled.Store(true)
			return ctx.Err()
		}
	}})
	q.enqueue(core.Job{Kind: kindEcho, Key: "running"})
	l.waitCount(t, s.h.Wait, "running", 1)
	if got, err := q.CancelJob(ctx, "running"); err != nil || got != nil {
		t.Errorf("CancelJob of a running job = %+v, %v; want nil, nil", got, err)
	}
	time.Sleep(s.h.Quiet)
	if ctxCancelled.Load() {
		t.Error("CancelJob cancelled the running job's context")
	}
	close(release)
	time.Sleep(s.h.Quiet)
	if got, err := q.CancelJob(ctx, "running"); err != nil || got != nil {
		t.Errorf("CancelJob of a finished job = %+v, %v; want nil, nil", got, err)
	}
	if c := l.of("running"); len(c) != 1 {
		t.Errorf("the job ran %d times, want once: %s", len(c), describe(c))
	}
	q.stopNow()
}
