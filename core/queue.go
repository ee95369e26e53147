package core

import (
	"context"
	"errors"
	"io"
	"sync"
)

// Queue is the job queue as the engine uses it, as Storage is the store:
// it checks Start's arguments (a worker; schedules each with a name and a
// Schedule, no two of one name) and a job's Kind and Key before any
// adapter sees them, so an adapter need not repeat the checks, and it
// owns the queue's lifecycle: started once, stopped once (then closed,
// when the adapter is an io.Closer), refusing every call after Stop with
// an error matching ErrQueueClosed. A Queue is safe for concurrent use.
type Queue struct {
	q      JobQueue
	closer io.Closer

	mu      sync.Mutex
	started bool
	stopped bool
	done    chan struct{} // closed when the first Stop returns
}

// NewQueue returns the Queue over q; its io.Closer, if any, is found once,
// by type assertion or through q's As method. A queue that is already a
// *Queue is returned as it is; a nil queue is a nil Queue.
func NewQueue(q JobQueue) *Queue {
	if q == nil {
		return nil
	}
	if qq, ok := q.(*Queue); ok {
		return qq
	}
	closer, _ := capabilityOf[io.Closer](q)
	return &Queue{q: q, closer: closer}
}

// As finds in the queue what target points to (see As).
func (q *Queue) As(target any) bool { return As(q.q, target) }

// Start implements JobQueue. Arguments that break the rules above are
// INVALID_CONFIG, and so is a second Start; a Start after Stop is
// ErrQueueClosed's code. A Start the adapter refuses may be tried again.
func (q *Queue) Start(ctx context.Context, w JobWorker, schedules []JobSchedule) error {
	if err := checkJobStart("job queue", w, schedules); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.stopped:
		return errQueueClosed
	case q.started:
		return &BreadError{Code: CodeInvalidConfig, Message: "job queue: Start called twice"}
	}
	if err := q.q.Start(ctx, w, schedules); err != nil {
		return err
	}
	q.started = true
	return nil
}

// Enqueue implements JobQueue. A job without a Kind or a Key is
// VALIDATION_ERROR; after Stop, ErrQueueClosed. A job may be enqueued
// before Start: it waits for a worker.
func (q *Queue) Enqueue(ctx context.Context, j Job) error {
	if j.Kind == "" || j.Key == "" {
		return &BreadError{Code: CodeValidationError, Message: "job queue: a job needs a Kind and a Key"}
	}
	if err := q.open(); err != nil {
		return err
	}
	return q.q.Enqueue(ctx, j)
}

// CancelJob implements JobQueue; after Stop it is ErrQueueClosed.
func (q *Queue) CancelJob(ctx context.Context, key string) (*Job, error) {
	if err := q.open(); err != nil {
		return nil, err
	}
	return q.q.CancelJob(ctx, key)
}

// Stop implements JobQueue, once: it stops the adapter (started or not)
// and then closes it when it is an io.Closer. A later Stop waits for the
// first and returns nil.
func (q *Queue) Stop(ctx context.Context) error {
	q.mu.Lock()
	if q.stopped {
		done := q.done
		q.mu.Unlock()
		<-done
		return nil
	}
	q.stopped = true
	q.done = make(chan struct{})
	q.mu.Unlock()

	err := q.q.Stop(ctx)
	if q.closer != nil {
		err = errors.Join(err, q.closer.Close())
	}
	close(q.done)
	return err
}

func (q *Queue) open() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return errQueueClosed
	}
	return nil
}

var errQueueClosed = &BreadError{Code: CodeQueueClosed, Message: "the job queue is stopped"}
