package bunstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"

	"github.com/breadai/bread/core"
)

// maxBatch bounds the writes of one shared transaction, so one commit never
// holds the database's write lock for long.
const maxBatch = 128

// committer is group commit: the writes of a Store queue here, and one
// goroutine, owned by the Store and stopped by Close, runs every write
// queued so far in one transaction, then commits once and only then
// answers each writer; a write that fails is taken out of the batch, which
// runs again without it (see together). A write is acknowledged only after
// the commit that holds it, so each write is exactly as durable as a commit
// of the database; many writes share one BEGIN, one COMMIT and, on SQLite, one
// append of the changed pages to the WAL.
//
// When the shared transaction fails as a whole (it does not begin, COMMIT
// fails), nothing of it is kept and every write of the batch runs again
// alone, in its own transaction, so one write's trouble is never another's
// error.
type committer struct {
	s *Store

	loops int // goroutines taking batches, Features.Committers

	mu      sync.Mutex
	queue   []*job
	started bool
	stopped bool

	wake   chan struct{}  // capacity 1: work was queued
	quit   chan struct{}  // closed by stop
	exited sync.WaitGroup // the goroutines
}

// job is one queued write.
type job struct {
	ctx   context.Context
	fn    func(ctx context.Context, tx bun.Tx) error
	text  *textWrite   // the write as statements, or nil
	state atomic.Int32 // jobQueued, then jobTaken or jobAbandoned, once
	err   error
	done  chan struct{}
}

const (
	jobQueued int32 = iota
	jobTaken
	jobAbandoned
)

func newCommitter(s *Store, loops int) *committer {
	return &committer{s: s, loops: max(1, loops), wake: make(chan struct{}, 1), quit: make(chan struct{})}
}

// do queues fn and waits for the commit that holds it. A write whose ctx
// ends while it is still queued is withdrawn and reports ctx's error; once
// the committer has taken it, do waits for its outcome, so an error never
// hides a write that committed. fn runs on the committer's goroutine with
// ctx's values but not its cancellation, which belongs to the whole batch.
func (c *committer) do(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	return c.queue1(&job{ctx: ctx, fn: fn, done: make(chan struct{})})
}

// doText is do for a write given as statements, which a dialect that
// pipelines sends with the rest of its batch in one round trip.
func (c *committer) doText(ctx context.Context, w *textWrite) error {
	return c.queue1(&job{ctx: ctx, fn: w.fn, text: w, done: make(chan struct{})})
}

// queue1 queues j and waits for its outcome (see do).
func (c *committer) queue1(j *job) error {
	ctx := j.ctx
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return c.s.storeClosed
	}
	if !c.started {
		c.started = true
		for range c.loops {
			c.exited.Go(c.loop)
		}
	}
	c.queue = append(c.queue, j)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	select {
	case <-j.done:
		return j.err
	case <-ctx.Done():
		if j.state.CompareAndSwap(jobQueued, jobAbandoned) {
			return ctx.Err()
		}
		<-j.done
		return j.err
	}
}

// stop refuses new writes, fails the queued ones with STORE_CLOSED and
// waits for the batch in flight to commit.
func (c *committer) stop() {
	c.mu.Lock()
	c.stopped = true
	queued := c.queue
	c.queue = nil
	started := c.started
	c.mu.Unlock()
	for _, j := range queued {
		if j.state.CompareAndSwap(jobQueued, jobTaken) {
			j.finish(c.s.storeClosed)
		}
	}
	if !started {
		return
	}
	close(c.quit)
	c.exited.Wait()
}

func (c *committer) loop() {
	var spare []*job // the last batch's array, the next queue's
	for {
		select {
		case <-c.wake:
		case <-c.quit:
		}
		// Writers woken by the last commit are about to queue their next
		// write: let them, so it joins this batch instead of the next.
		runtime.Gosched()
		for {
			c.mu.Lock()
			if c.stopped && len(c.queue) == 0 {
				c.mu.Unlock()
				return
			}
			batch := c.queue
			if len(batch) > maxBatch {
				c.queue = append(spare[:0], batch[maxBatch:]...)
				batch = batch[:maxBatch]
			} else {
				c.queue = spare[:0]
			}
			spare = nil // the queue's array now
			c.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			c.run(batch)
			clear(batch)
			spare = batch[:0]
		}
	}
}

// run commits one batch: the writes still wanted, together when there are
// several, and answers each.
func (c *committer) run(batch []*job) {
	n := 0
	for _, j := range batch {
		if !j.state.CompareAndSwap(jobQueued, jobTaken) {
			continue // abandoned by its writer
		}
		if err := j.ctx.Err(); err != nil {
			j.finish(err)
			continue
		}
		batch[n] = j
		n++
	}
	batch = batch[:n]
	if n == 0 {
		return
	}
	if c.pipelines(batch) {
		c.runPipelined(batch)
		return
	}
	c.s.prepared.prepare(context.Background(), c.s.db.DB)
	if ws := c.s.writeSlot; ws != nil {
		ws <- struct{}{}
		defer func() { <-ws }()
	}
	for len(batch) > 1 {
		failed, committed := c.together(batch)
		if committed {
			for _, j := range batch {
				j.finish(nil)
			}
			return
		}
		if failed < 0 {
			break
		}
		// The batch runs again without the failed write, which then runs
		// alone: its error may be the shared transaction's (a deadlock
		// between two batches on PostgreSQL), not its own.
		retry := batch[failed]
		batch = append(batch[:failed], batch[failed+1:]...)
		defer func() { retry.finish(c.alone(retry)) }()
	}
	for _, j := range batch {
		j.finish(c.alone(j))
	}
}

// alone runs one write in a transaction of its own. A transaction the
// database aborted for a conflict with another (the dialect's Conflict: a
// deadlock, a serialization failure) runs again, up to maxConflictRuns
// times in all, after a short wait that grows: the conflict is another
// transaction's, often another committer's batch, and reporting it would
// fail a write that nothing was wrong with.
func (c *committer) alone(j *job) error {
	ctx := context.WithoutCancel(j.ctx)
	return c.againOnConflict(func() error {
		return c.s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			return call(ctx, tx, j.fn)
		})
	})
}

// againOnConflict runs txn, a transaction, until it does not fail for a
// conflict, or maxConflictRuns times.
func (c *committer) againOnConflict(txn func() error) error {
	for run, wait := 1, time.Millisecond; ; run, wait = run+1, min(2*wait, maxConflictWait) {
		err := txn()
		if err == nil || run == maxConflictRuns || !c.s.d.Conflict(err) {
			return err
		}
		time.Sleep(wait + rand.N(wait))
	}
}

// maxConflictRuns bounds how many times alone runs a write whose
// transactions keep meeting conflicts, and maxConflictWait the wait
// between two runs (before its jitter): about a third of a second in all.
// Five runs 1 to 16 ms apart were too few on MySQL, where many fenced
// inserts into one gap of the index deadlock in turn: under load one
// write in a few thousand lost all five (bunstoretest.FencedInsertsAtOnce).
const (
	maxConflictRuns = 10
	maxConflictWait = 32 * time.Millisecond
)

// together runs the batch in one transaction, in order, and commits:
// committed reports it did. When a write fails, the transaction is rolled
// back at once and failed is its index: the batch then runs again without
// it, and it runs alone. (This spares a savepoint per write, three
// statements, for the rare write that fails.) failed is -1 when the
// transaction itself failed (BEGIN, COMMIT): nothing of it was kept.
func (c *committer) together(batch []*job) (failed int, committed bool) {
	tx, err := c.s.db.BeginTx(context.Background(), nil)
	if err != nil {
		return -1, false
	}
	for i, j := range batch {
		if j.err = call(context.WithoutCancel(j.ctx), tx, j.fn); j.err != nil {
			_ = tx.Rollback()
			return i, false
		}
	}
	if err := tx.Commit(); err != nil {
		_ = tx.Rollback()
		return -1, false
	}
	return -1, true
}

// call runs fn, turning a panic into its error: the committer's goroutine
// serves every writer of the Store and must outlive one write's bug.
func call(ctx context.Context, tx bun.Tx, fn func(context.Context, bun.Tx) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &core.BreadError{Code: core.CodeStoreError, Message: fmt.Sprintf("a store write panicked: %v", r)}
		}
	}()
	return fn(ctx, tx)
}

func (j *job) finish(err error) {
	j.err = err
	close(j.done)
}
