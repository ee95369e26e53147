package jobtest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

const kindEcho = "jobtest.echo"

// workedOnce: a job enqueued before Start and one enqueued after are each
// handed out once, as enqueued, with Attempt 1.
func (s *suite) workedOnce(t *testing.T) {
	q := s.newQueue(t)
	l := newLog()
	before := core.Job{Kind: kindEcho, Key: "before-start", Payload: json.RawMessage(`{"n":1,"text":"héllo"}`), MaxAttempts: 3}
	after := core.Job{Kind: "jobtest.other", Key: "after-start", Payload: json.RawMessage(`{"list":[1,2],"b":true}`)}
	q.enqueue(before)
	q.start(&worker{log: l})
	q.enqueue(after)
	l.waitCount(t, s.h.Wait, before.Key, 1)
	l.waitCount(t, s.h.Wait, after.Key, 1)
	time.Sleep(s.h.Quiet)
	for _, want := range []core.Job{before, after} {
		calls := l.of(want.Key)
		if len(calls) != 1 {
			t.Errorf("%q worked %d times, want once: %s", want.Key, len(calls), describe(calls))
			continue
		}
		got := calls[0].job
		if got.Kind != want.Kind || got.Key != want.Key || !jsonEqual(got.Payload, want.Payload) {
			t.Errorf("handed out %+v (payload %s), want %+v (payload %s)", got, got.Payload, want, want.Payload)
		}
		if got.Attempt != 1 {
			t.Errorf("%q: Attempt %d, want 1", want.Key, got.Attempt)
		}
		if got.Attempts() != want.Attempts() {
			t.Errorf("%q: handed out with %d max attempts, enqueued with %d", want.Key, got.Attempts(), want.Attempts())
		}
	}
	q.stopNow()
}

// retriesUntilMaxAttempts: a WorkJob error hands the job out again with
// the next Attempt until MaxAttempts attempts failed, then never again; a
// job that succeeds on a retry is not handed out after it.
func (s *suite) retriesUntilMaxAttempts(t *testing.T) {
	q := s.newQueue(t)
	l := newLog()
	boom := errors.New("jobtest: boom")
	q.start(&worker{log: l, handle: func(_ context.Context, j core.Job) error {
		if j.Key == "always-fails" || (j.Key == "fails-once" && j.Attempt == 1) {
			return boom
		}
		return nil
	}})
	q.enqueue(core.Job{Kind: kindEcho, Key: "always-fails", MaxAttempts: 3})
	q.enqueue(core.Job{Kind: kindEcho, Key: "fails-once", MaxAttempts: 5})
	l.waitCount(t, 3*s.h.Wait, "always-fails", 3)
	l.waitCount(t, 3*s.h.Wait, "fails-once", 2)
	time.Sleep(2 * s.h.Quiet)
	for key, want := range map[string][]int{"always-fails": {1, 2, 3}, "fails-once": {1, 2}} {
		calls := l.of(key)
		if len(calls) != len(want) {
			t.Errorf("%q worked %d times, want %d: %s", key, len(calls), len(want), describe(calls))
			continue
		}
		for i, c := range calls {
			if c.job.Attempt != want[i] {
				t.Errorf("%q call %d: Attempt %d, want %d: %s", key, i+1, c.job.Attempt, want[i], describe(calls))
			}
		}
	}
	q.stopNow()
}

// snoozeKeepsTheAttempt: a *core.JobSnooze hands the job out again after
// its delay with the same Attempt, so a job of one attempt can snooze
// twice and still complete.
func (s *suite) snoozeKeepsTheAttempt(t *testing.T) {
	q := s.newQueue(t)
	l := newLog()
	const delay = time.Second
	q.start(&worker{log: l, handle: func(_ context.Context, j core.Job) error {
		switch len(l.of(j.Key)) {
		case 1:
			return &core.JobSnooze{After: delay}
		case 2:
			return &core.JobSnooze{After: 100 * time.Millisecond}
		}
		return nil
	}})
	q.enqueue(core.Job{Kind: kindEcho, Key: "snoozer", MaxAttempts: 1})
	l.waitCount(t, s.h.Wait+delay, "snoozer", 3)
	time.Sleep(s.h.Quiet)
	calls := l.of("snoozer")
	if len(calls) != 3 {
		t.Fatalf("snoozer worked %d times, want 3 (snooze, snooze, done): %s", len(calls), describe(calls))
	}
	for i, c := range calls {
		if c.job.Attempt != 1 {
			t.Errorf("call %d: Attempt %d, want 1: a snooze is not an attempt", i+1, c.job.Attempt)
		}
	}
	// A little slack for a queue whose clock is its database's.
	if gap := calls[1].at.Sub(calls[0].at); gap < delay-100*time.Millisecond {
		t.Errorf("handed out again %v after a snooze of %v", gap, delay)
	}
	q.stopNow()
}

// duplicateKeyIsOneJob: enqueueing a key that is queued, or running, adds
// no second job; once its job finished, the key can be enqueued again.
func (s *suite) duplicateKeyIsOneJob(t *testing.T) {
	q := s.newQueue(t)
	l := newLog()
	release := make(chan struct{})
	// Before Start, so the first is surely still queued when the second
	// comes.
	dup := core.Job{Kind: kindEcho, Key: "queued-twice", Payload: json.RawMessage(`{"v":1}`)}
	q.enqueue(dup)
	dup.Payload = json.RawMessage(`{"v":2}`)
	q.enqueue(dup)
	q.start(&worker{log: l, handle: func(ctx context.Context, j core.Job) error {
		if j.Key == "busy" && len(l.of("busy")) == 1 {
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}})
	q.enqueue(core.Job{Kind: kindEcho, Key: "busy"})
	l.waitCount(t, s.h.Wait, "busy", 1)
	q.enqueue(core.Job{Kind: kindEcho, Key: "busy"}) // running: not added
	time.Sleep(s.h.Quiet)
	close(release)
	time.Sleep(s.h.Quiet)
	if c := l.of("queued-twice"); len(c) != 1 {
		t.Errorf("a key enqueued twice was worked %d times, want once: %s", len(c), describe(c))
	} else if !jsonEqual(c[0].job.Payload, json.RawMessage(`{"v":1}`)) {
		t.Errorf("the duplicate replaced the queued job: payload %s, want the first's", c[0].job.Payload)
	}
	if c := l.of("busy"); len(c) != 1 {
		t.Errorf("a key enqueued while its job ran was worked %d times, want once: %s", len(c), describe(c))
	}
	q.enqueue(core.Job{Kind: kindEcho, Key: "busy"}) // finished: a new job
	l.waitCount(t, s.h.Wait, "busy", 2)
	q.stopNow()
}
