package jobtest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

// stopWaitsForRunningJob: Stop with time to spare waits for the running
// job to finish, without cancelling its context, and returns nil.
func (s *suite) stopWaitsForRunningJob(t *testing.T) {
	q := s.newQueue(t)
	l := newLog()
	const work = 500 * time.Millisecond
	var finished, ctxCancelled atomic.Bool
	q.start(&worker{log: l, handle: func(ctx context.Context, _ core.Job) error {
		select {
		case <-time.After(work):
			finished.Store(true)
			return nil
		case <-ctx.Done():
			ctxCancelled.Store(true)
			return ctx.Err()
		}
	}})
	q.enqueue(core.Job{Kind: kindEcho, Key: "slow"})
	l.waitCount(t, s.h.Wait, "slow", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := q.stop(ctx); err != nil {
		t.Errorf("Stop with time to spare: %v", err)
	}
	if !finished.Load() {
		t.Error("Stop returned before the running job finished")
	}
	if ctxCancelled.Load() {
		t.Error("Stop cancelled a running job's context before its own deadline")
	}
}

// stopCancelsAtDeadline: Stop waits for a running job until its context
// ends, then cancels the job's context, waits for WorkJob to return, and
// returns the context's error.
func (s *suite) stopCancelsAtDeadline(t *testing.T) {
	q := s.newQueue(t)
	l := newLog()
	var returned atomic.Bool
	q.start(&worker{log: l, handle: func(ctx context.Context, _ core.Job) error {
		<-ctx.Done()
		returned.Store(true)
		return ctx.Err()
	}})
	q.enqueue(core.Job{Kind: kindEcho, Key: "stuck"})
	l.waitCount(t, s.h.Wait, "stuck", 1)
	const grace = 500 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	began := time.Now()
	err := q.stop(ctx)
	took := time.Since(began)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Stop past its deadline = %v, want context.DeadlineExceeded", err)
	}
	if took < grace-50*time.Millisecond {
		t.Errorf("Stop returned after %v, before its context's deadline (%v)", took, grace)
	}
	if !returned.Load() {
		t.Error("Stop returned before the job's context was cancelled and WorkJob returned")
	}
}
