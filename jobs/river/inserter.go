package riverjobs

import (
	"context"
	"sync"

	"github.com/riverqueue/river"

	"github.com/breadai/bread/core"
)

// maxInsertBatch bounds the jobs of one InsertMany.
const maxInsertBatch = 500

// inserter is group insert: the Enqueue calls of a Queue queue here, and
// one goroutine, owned by the Queue and stopped by Close, inserts every job
// queued so far with one River InsertMany, one transaction, and only then
// answers each caller. On PostgreSQL each of River's insert transactions
// also NOTIFYs (unless the driver says it cannot; see pollOnlyDriver), and
// PostgreSQL serialises the commits of notifying transactions on one lock:
// one insert per transaction capped a queue at one job per WAL flush.
//
// Up to inFlight batches are inserted at once, each on a goroutine of its
// own that the loop waits for: a batch is taken from the queue only when a
// slot is free, so while every slot waits for its commit the callers
// gather into the next batch, and a caller arriving at an idle queue is
// inserted at once rather than behind the batch committing. On PostgreSQL
// two batches in flight overlap one batch's commit (its WAL flush) with
// the next batch's statements, and PostgreSQL's own group commit flushes
// concurrent commits together.
//
// Enqueue still returns only once its job's insert committed. A batch that
// fails as a whole is inserted again one job at a time, so each caller gets
// its own outcome.
type inserter struct {
	insertMany func(context.Context, []river.InsertManyParams) error // one transaction
	inFlight   int                                                   // batches inserted at once, at least 1

	mu      sync.Mutex
	queue   []*insertReq
	started bool
	stopped bool

	wake   chan struct{} // capacity 1: work was queued
	quit   chan struct{} // closed by stop
	exited sync.WaitGroup
}

// insertReq is one Enqueue waiting for its insert.
type insertReq struct {
	params river.InsertManyParams
	key    string
	err    error
	done   chan struct{}
}

func newInserter(insertMany func(context.Context, []river.InsertManyParams) error, inFlight int) *inserter {
	return &inserter{insertMany: insertMany, inFlight: max(inFlight, 1), wake: make(chan struct{}, 1), quit: make(chan struct{})}
}

// insert queues p and waits for the commit of its insert. A caller whose
// ctx ends first gets ctx's error, though the job may still be inserted:
// as with an insert whose connection broke, the caller cannot tell.
func (in *inserter) insert(ctx context.Context, key string, p river.InsertManyParams) error {
	r := &insertReq{params: p, key: key, done: make(chan struct{})}
	in.mu.Lock()
	if in.stopped {
		in.mu.Unlock()
		return core.Errorf(core.CodeStoreUnavailable, "riverjobs: the queue is closed")
	}
	if !in.started {
		in.started = true
		in.exited.Go(in.loop)
	}
	in.queue = append(in.queue, r)
	in.mu.Unlock()
	select {
	case in.wake <- struct{}{}:
	default:
	}
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stop inserts what is queued and waits for the goroutine; later inserts
// fail.
func (in *inserter) stop() {
	in.mu.Lock()
	if in.stopped {
		in.mu.Unlock()
		return
	}
	in.stopped = true
	started := in.started
	in.mu.Unlock()
	if started {
		close(in.quit)
		in.exited.Wait()
	}
}

func (in *inserter) loop() {
	slots := make(chan struct{}, in.inFlight)
	var batches sync.WaitGroup
	defer batches.Wait()
	for {
		select {
		case <-in.wake:
		case <-in.quit:
		}
		for {
			slots <- struct{}{} // take a batch only when it can start
			in.mu.Lock()
			batch := in.queue
			if len(batch) > maxInsertBatch {
				in.queue = append([]*insertReq(nil), batch[maxInsertBatch:]...)
				batch = batch[:maxInsertBatch]
			} else {
				in.queue = nil
			}
			stopped := in.stopped
			in.mu.Unlock()
			if len(batch) == 0 {
				<-slots
				if stopped {
					return
				}
				break
			}
			batches.Go(func() {
				defer func() { <-slots }()
				in.run(batch)
			})
		}
	}
}

// run inserts batch in one InsertMany and answers each request. Requests
// for one key share the first one's insert: River would insert the second
// as a unique duplicate anyway, and one statement cannot insert a key twice.
func (in *inserter) run(batch []*insertReq) {
	ctx := context.Background()
	first := make(map[string]*insertReq, len(batch))
	params := make([]river.InsertManyParams, 0, len(batch))
	var dups []*insertReq
	for _, r := range batch {
		if _, ok := first[r.key]; ok {
			dups = append(dups, r)
			continue
		}
		first[r.key] = r
		params = append(params, r.params)
	}
	if len(params) == 1 {
		err := in.insertMany(ctx, params)
		for _, r := range batch {
			r.finish(err)
		}
		return
	}
	if err := in.insertMany(ctx, params); err == nil {
		for _, r := range batch {
			r.finish(nil)
		}
		return
	}
	for _, r := range batch {
		if first[r.key] != r {
			continue
		}
		err := in.insertMany(ctx, []river.InsertManyParams{r.params})
		r.finish(err)
	}
	for _, r := range dups {
		r.finish(first[r.key].err)
	}
}

func (r *insertReq) finish(err error) {
	r.err = err
	close(r.done)
}
