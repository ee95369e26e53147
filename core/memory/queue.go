package memory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/breadai/bread/core"
)

// QueueOptions configure a Queue. The zero value is usable.
type QueueOptions struct {
	// Concurrency is how many jobs run at once (0: 10).
	Concurrency int
	// RetryBackoff is the wait before a job whose attempt failed is handed
	// out again; attempt is the attempt that failed, 1 for the first (nil:
	// attempt² seconds, at most ten minutes).
	RetryBackoff func(attempt int) time.Duration
	// Logger gets a line per discarded job and per panic in WorkJob (nil:
	// slog.Default()).
	Logger *slog.Logger
}

// Queue is an in-process core.JobQueue: the dev fallback and the queue of
// a single process with no database to share. Jobs live in memory only: a
// process that exits, or a Queue that stops, loses the jobs still queued,
// and nothing hands out again a job that Stop cancelled. Use jobs/river
// for jobs that must outlive the process or be shared by replicas.
//
// The Queue owns its goroutines (Concurrency workers and one per
// schedule); Start starts them and Stop ends them. Its methods are safe
// for concurrent use.
type Queue struct {
	opts QueueOptions

	mu      sync.Mutex
	jobs    map[string]*queued // by key: every job queued or running
	ready   []*queued          // FIFO of queued jobs due now
	started bool
	stopped bool
	worker  core.JobWorker
	wake    chan struct{} // a job became ready (buffered 1)
	quit    chan struct{} // closed by Stop: hand out nothing more
	runCtx  context.Context
	cancel  context.CancelFunc // cancels runCtx: the running jobs' contexts
	wg      sync.WaitGroup     // workers and schedule goroutines
}

// queued is a job in the queue. failed counts its failed attempts, so it
// is handed out as attempt failed+1; a snooze does not count.
type queued struct {
	job     core.Job
	failed  int
	running bool
	timer   *time.Timer // waiting out a retry backoff or a snooze
}

var _ core.JobQueue = (*Queue)(nil)

// NewQueue returns a Queue, not started.
func NewQueue(o QueueOptions) *Queue {
	if o.Concurrency <= 0 {
		o.Concurrency = 10
	}
	if o.RetryBackoff == nil {
		o.RetryBackoff = defaultRetryBackoff
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Queue{
		opts: o,
		jobs: map[string]*queued{},
		wake: make(chan struct{}, 1),
		quit: make(chan struct{}),
	}
}

func defaultRetryBackoff(attempt int) time.Duration {
	if attempt > 24 {
		return 10 * time.Minute
	}
	return min(time.Duration(attempt*attempt)*time.Second, 10*time.Minute)
}

// Start starts the workers and the schedules' timers. ctx's values reach
// the jobs' contexts; its cancellation does not stop the queue (Stop
// does).
func (q *Queue) Start(ctx context.Context, w core.JobWorker, schedules []core.JobSchedule) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started || q.stopped {
		return core.Errorf(core.CodeInvalidConfig, "memory queue: Start called twice, or after Stop")
	}
	q.started = true
	q.worker = w
	q.runCtx, q.cancel = context.WithCancel(context.WithoutCancel(ctx))
	for range q.opts.Concurrency {
		q.wg.Go(q.work)
	}
	for _, s := range schedules {
		q.wg.Go(func() { q.tick(s) })
	}
	q.poke()
	return nil
}

// Enqueue adds j, unless a job with its key is queued or running.
func (q *Queue) Enqueue(_ context.Context, j core.Job) error {
	if j.Key == "" || j.Kind == "" {
		return core.Errorf(core.CodeValidationError, "memory queue: a job needs a Kind and a Key")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return core.Errorf(core.CodeInstanceStopping, "memory queue: stopped; job %q not queued", j.Key)
	}
	if _, ok := q.jobs[j.Key]; ok {
		return nil
	}
	j.Payload = append([]byte(nil), j.Payload...)
	e := &queued{job: j}
	q.jobs[j.Key] = e
	q.ready = append(q.ready, e)
	q.poke()
	return nil
}

// CancelJob removes the queued job with key and returns it. A running job
// is not touched.
func (q *Queue) CancelJob(_ context.Context, key string) (*core.Job, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	e, ok := q.jobs[key]
	if !ok || e.running {
		return nil, nil
	}
	// A job in ready is skipped by the workers once it is out of jobs.
	delete(q.jobs, key)
	if e.timer != nil {
		e.timer.Stop()
	}
	j := e.job
	j.Attempt = e.failed
	j.Payload = append([]byte(nil), e.job.Payload...)
	return &j, nil
}

// Stop stops handing out jobs and ticking, waits for the running jobs
// until ctx ends, then cancels their contexts, waits for them to return
// and returns ctx's error. Jobs still queued are dropped with the Queue.
func (q *Queue) Stop(ctx context.Context) error {
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		return nil
	}
	q.stopped = true
	close(q.quit)
	for _, e := range q.jobs {
		if e.timer != nil {
			e.timer.Stop()
		}
	}
	started := q.started
	q.mu.Unlock()
	if !started {
		return nil
	}
	done := make(chan struct{})
	go func() {
		q.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		q.cancel()
		return nil
	case <-ctx.Done():
		q.cancel()
		<-done
		return fmt.Errorf("memory queue: stop: %w", ctx.Err())
	}
}

// poke wakes a worker. Callers hold q.mu.
func (q *Queue) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// next takes the first ready job still in the queue and marks it running,
// or returns nil.
func (q *Queue) next() *queued {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.ready) > 0 {
		e := q.ready[0]
		q.ready[0] = nil
		q.ready = q.ready[1:]
		if q.jobs[e.job.Key] != e || e.running {
			continue // cancelled since
		}
		e.running = true
		if len(q.ready) > 0 {
			q.poke() // more for another worker
		}
		return e
	}
	return nil
}

// work is one worker goroutine.
func (q *Queue) work() {
	for {
		select {
		case <-q.quit:
			return
		default:
		}
		e := q.next()
		if e == nil {
			select {
			case <-q.quit:
				return
			case <-q.wake:
			}
			continue
		}
		j := e.job
		j.Attempt = e.failed + 1
		j.Payload = append([]byte(nil), e.job.Payload...)
		q.finish(e, q.run(j))
	}
}

// run calls the worker, turning a panic into an error: one bad job must
// not take the process down.
func (q *Queue) run(j core.Job) (err error) {
	defer func() {
		if p := recover(); p != nil {
			q.opts.Logger.Error("memory queue: WorkJob panicked", "kind", j.Kind, "key", j.Key, "panic", fmt.Sprint(p))
			err = fmt.Errorf("memory queue: WorkJob panicked: %v", p)
		}
	}()
	return q.worker.WorkJob(q.runCtx, j)
}

// finish records what WorkJob returned for e.
func (q *Queue) finish(e *queued, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	e.running = false
	var snooze *core.JobSnooze
	switch {
	case err == nil:
		delete(q.jobs, e.job.Key)
	case errors.As(err, &snooze):
		q.later(e, snooze.After)
	case q.runCtx.Err() != nil:
		// Cancelled by Stop: not an attempt. It stays queued, which in
		// memory means until the Queue is dropped.
	default:
		e.failed++
		if e.failed >= e.job.Attempts() {
			delete(q.jobs, e.job.Key)
			q.opts.Logger.Warn("memory queue: job discarded after its last attempt",
				"kind", e.job.Kind, "key", e.job.Key, "attempts", e.failed, "error", err.Error())
			return
		}
		q.later(e, q.opts.RetryBackoff(e.failed))
	}
}

// later makes e ready after d. Callers hold q.mu.
func (q *Queue) later(e *queued, d time.Duration) {
	if q.stopped {
		return
	}
	e.timer = time.AfterFunc(max(d, 0), func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		if q.stopped || q.jobs[e.job.Key] != e || e.running {
			return
		}
		e.timer = nil
		q.ready = append(q.ready, e)
		q.poke()
	})
}

// tick enqueues s's ticks until Stop. A tick missed because the process
// was busy past the next one is skipped, not fired late.
func (q *Queue) tick(s core.JobSchedule) {
	next := s.Schedule.Next(time.Now())
	for {
		t := time.NewTimer(time.Until(next))
		select {
		case <-q.quit:
			t.Stop()
			return
		case <-t.C:
		}
		err := q.Enqueue(q.runCtx, core.Job{Kind: core.JobKindTick, Key: core.ScheduleTickKey(s.Name, next), Payload: s.Payload})
		if err != nil && !q.isStopped() {
			q.opts.Logger.Error("memory queue: schedule tick not queued", "schedule", s.Name, "error", err.Error())
		}
		now := time.Now()
		next = s.Schedule.Next(next)
		if next.Before(now) {
			next = s.Schedule.Next(now)
		}
	}
}

func (q *Queue) isStopped() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.stopped
}
