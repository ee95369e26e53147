package jobtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

// sharedEachJobOnce: 200 jobs enqueued on one queue and worked by two
// queues on the same backend are each worked exactly once.
func (s *suite) sharedEachJobOnce(t *testing.T) {
	const n = 200
	l := newLog()
	q1, q2 := s.newQueue(t), s.newQueue(t)
	slow := func(ctx context.Context, _ core.Job) error {
		select {
		case <-time.After(5 * time.Millisecond):
		case <-ctx.Done():
		}
		return nil
	}
	q1.start(&worker{log: l, queue: 1, handle: slow})
	q2.start(&worker{log: l, queue: 2, handle: slow})
	for i := range n {
		q1.enqueue(core.Job{Kind: kindEcho, Key: fmt.Sprintf("job-%03d", i), Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
	}
	l.waitFor(t, 4*s.h.Wait, fmt.Sprintf("all %d jobs", n), func(cs []call) bool {
		seen := map[string]bool{}
		for _, c := range cs {
			seen[c.job.Key] = true
		}
		return len(seen) >= n
	})
	time.Sleep(s.h.Quiet)
	counts := l.counts()
	for _, k := range sortedKeys(counts) {
		if counts[k] != 1 {
			t.Errorf("%s worked %d times, want once: %s", k, counts[k], describe(l.of(k)))
		}
	}
	per := map[int]int{}
	for _, c := range l.snapshot() {
		per[c.queue]++
	}
	t.Logf("jobs worked per queue: %v", per)
	q1.stopNow()
	q2.stopNow()
}

// sharedScheduleOncePerTick: three queues on one backend, started with the
// same schedule every second for about five seconds, fire each tick once in
// total, not once per queue.
func (s *suite) sharedScheduleOncePerTick(t *testing.T) {
	l := newLog()
	sched := core.JobSchedule{Name: "shared", Schedule: core.Every(time.Second), Payload: json.RawMessage(`{"s":1}`)}
	qs := []*queue{s.newQueue(t), s.newQueue(t), s.newQueue(t)}
	from := time.Now()
	for i, q := range qs {
		q.start(&worker{log: l, queue: i + 1}, sched)
	}
	l.waitFor(t, s.h.Wait+5*time.Second, "5 ticks", func(cs []call) bool {
		seen := map[string]bool{}
		for _, c := range cs {
			seen[c.job.Key] = true
		}
		return len(seen) >= 5
	})
	for _, q := range qs {
		q.stopNow()
	}
	to := time.Now()
	time.Sleep(s.h.Quiet)
	calls := l.snapshot()
	ticks := checkTicks(t, calls, sched, from, to)
	if len(calls) != len(ticks) {
		t.Errorf("%d tick calls for %d ticks: %s", len(calls), len(ticks), describe(calls))
	}
	if most := int(to.Sub(from)/time.Second) + 2; len(ticks) > most {
		t.Errorf("%d ticks in %v, more than once per second", len(ticks), to.Sub(from))
	}
}

// sharedStoppedJobHandedOutAgain: a job whose context Stop cancelled is
// handed out again, here to another queue on the backend, with the same
// Attempt.
func (s *suite) sharedStoppedJobHandedOutAgain(t *testing.T) {
	l := newLog()
	q1, q2 := s.newQueue(t), s.newQueue(t)
	q1.start(&worker{log: l, queue: 1, handle: func(ctx context.Context, _ core.Job) error {
		<-ctx.Done()
		return ctx.Err()
	}})
	q1.enqueue(core.Job{Kind: kindEcho, Key: "handover", Payload: json.RawMessage(`{"x":1}`)})
	l.waitCount(t, s.h.Wait, "handover", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := q1.stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Stop past its deadline = %v, want context.DeadlineExceeded", err)
	}
	q2.start(&worker{log: l, queue: 2})
	calls := l.waitCount(t, s.h.Wait, "handover", 2)
	if calls[1].queue != 2 {
		t.Errorf("handed out again to queue %d, want the running one (2)", calls[1].queue)
	}
	// Stop cut the attempt short; it did not fail (core.Job.Attempt counts
	// only an attempt lost with its process).
	if calls[1].job.Attempt != 1 {
		t.Errorf("handed out again as attempt %d, want 1: a job Stop cancelled did not fail", calls[1].job.Attempt)
	}
	if !jsonEqual(calls[1].job.Payload, json.RawMessage(`{"x":1}`)) {
		t.Errorf("handed out again with payload %s", calls[1].job.Payload)
	}
	q2.stopNow()
}

// sharedDuplicateKeyIsOneJob: one key enqueued at once from many
// goroutines on two queues of one backend is one job.
func (s *suite) sharedDuplicateKeyIsOneJob(t *testing.T) {
	l := newLog()
	q1, q2 := s.newQueue(t), s.newQueue(t)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		q := q1
		if i%2 == 1 {
			q = q2
		}
		wg.Go(func() {
			errs <- q.Enqueue(t.Context(), core.Job{Kind: kindEcho, Key: "contended", Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Enqueue of a contended key: %v", err)
		}
	}
	q1.start(&worker{log: l, queue: 1})
	q2.start(&worker{log: l, queue: 2})
	l.waitCount(t, s.h.Wait, "contended", 1)
	time.Sleep(s.h.Quiet)
	if c := l.of("contended"); len(c) != 1 {
		t.Errorf("a key enqueued 20 times at once was worked %d times, want once: %s", len(c), describe(c))
	}
	q1.stopNow()
	q2.stopNow()
}

// sharedJobOutlivesItsQueue: a job enqueued on a queue that stops without
// ever starting (a process that died after Enqueue returned) is worked by
// another queue of the backend.
func (s *suite) sharedJobOutlivesItsQueue(t *testing.T) {
	l := newLog()
	q1 := s.newQueue(t)
	q1.enqueue(core.Job{Kind: kindEcho, Key: "orphan", Payload: json.RawMessage(`{"o":1}`)})
	q1.stopNow()
	q2 := s.newQueue(t)
	q2.start(&worker{log: l, queue: 2})
	c := l.waitCount(t, s.h.Wait, "orphan", 1)
	if !jsonEqual(c[0].job.Payload, json.RawMessage(`{"o":1}`)) || c[0].job.Attempt != 1 {
		t.Errorf("handed out %+v (payload %s), want the job enqueued, attempt 1", c[0].job, c[0].job.Payload)
	}
	q2.stopNow()
}
