package jobtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

// queue is a queue under test, behind the core.Queue the engine drives
// it through (which checks Start's arguments for every adapter): Start and
// Stop once, and stopped at cleanup whether or not the case did.
type queue struct {
	core.JobQueue
	t       *testing.T
	mu      sync.Mutex
	stopped bool
}

// newQueue gets a queue from the harness. The first call of a test also
// arms the goroutine check, before the harness registers its own cleanups,
// so the check runs after them.
func (s *suite) newQueue(t *testing.T) *queue {
	t.Helper()
	s.armLeakCheck(t)
	adapter := s.h.New(t)
	if adapter == nil {
		t.Fatal("jobtest: Harness.New returned nil")
	}
	q := &queue{JobQueue: core.NewQueue(adapter), t: t}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		q.stop(ctx)
	})
	return q
}

func (q *queue) start(w core.JobWorker, schedules ...core.JobSchedule) {
	q.t.Helper()
	if err := q.Start(q.t.Context(), w, schedules); err != nil {
		q.t.Fatalf("Start: %v", err)
	}
}

func (q *queue) enqueue(j core.Job) {
	q.t.Helper()
	if err := q.Enqueue(q.t.Context(), j); err != nil {
		q.t.Fatalf("Enqueue(%q): %v", j.Key, err)
	}
}

// stop stops the queue once and returns Stop's error; later calls return
// nil.
func (q *queue) stop(ctx context.Context) error {
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		return nil
	}
	q.stopped = true
	q.mu.Unlock()
	return q.Stop(ctx)
}

// stopNow stops the queue with a generous deadline and fails the test on
// an error: nothing is left running when it is called.
func (q *queue) stopNow() {
	q.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := q.stop(ctx); err != nil {
		q.t.Errorf("Stop with no job running: %v", err)
	}
}
