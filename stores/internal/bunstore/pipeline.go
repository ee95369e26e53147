package bunstore

import (
	"context"
	"database/sql"

	"github.com/uptrace/bun"

	"github.com/breadai/bread/core"
)

// Pipeliner sends many statements to the database in one round trip, as
// one transaction. On PostgreSQL, the statements of one pipeline up to its
// Sync run in one implicit transaction that commits when the last
// succeeds: a batch of the committer then costs one round trip (and one
// commit) instead of BEGIN, a round trip per statement and COMMIT.
type Pipeliner interface {
	// Pipeline runs stmts in order, in one transaction, and fills affected
	// (len(stmts)) with the rows each statement changed. It returns -1 and
	// nil once the transaction committed. When statement i fails, nothing
	// is kept: it returns i and the statement's error. When the
	// transaction fails as a whole (the connection, the commit), nothing is
	// kept and it returns len(stmts) or more.
	Pipeline(ctx context.Context, db *sql.DB, stmts []Stmt, affected []int64) (failed int, err error)
}

// Stmt is one statement of a pipelined write: SQL with its values written
// in (bun's text, Args nil), or, when Name is set, SQL in PostgreSQL's $n
// placeholders with its Args (string, int64 or nil), which the Pipeliner
// prepares once per connection under Name and then only binds and
// executes (see prepstmts.go).
type Stmt struct {
	Name string
	SQL  string
	Args []any
}

// textWrite is a write given as finished statements, which the committer
// can pipeline (Features.Pipeline). check, when set, judges the rows each
// statement changed once they committed; it may fail the write only when
// the counts it refuses mean the write changed nothing (a message for a
// missing session inserts no row), since the transaction holding it has
// committed by then.
type textWrite struct {
	stmts []Stmt
	check func(affected []int64) error
	// fenced says the statements check the context's run fence
	// themselves (prepFenceLockRun, prepPutRunFenced): no prepFence
	// before them.
	fenced bool
}

// fn runs w in tx, for the transactions that do not pipeline.
func (w *textWrite) fn(ctx context.Context, tx bun.Tx) error {
	affected := make([]int64, len(w.stmts))
	for i, q := range w.stmts {
		// The *sql.Tx itself: bun would read the ? of the text as its own
		// placeholders.
		res, err := tx.Tx.ExecContext(ctx, q.SQL, q.Args...)
		if err != nil {
			return err
		}
		if affected[i], err = res.RowsAffected(); err != nil {
			return err
		}
	}
	if w.check != nil {
		return w.check(affected)
	}
	return nil
}

// writeText runs w through write: pipelined with the other writes of its
// batch when the dialect pipelines, as statements in a shared transaction
// otherwise.
func (s *Store) writeText(ctx context.Context, op string, onFK *core.BreadError, w *textWrite) error {
	if s.closed.Load() {
		return s.storeClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	f, ok, err := runFence(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return s.mapErr(op, s.commits.doText(ctx, w), onFK)
	}
	err = s.commits.doText(ctx, fencedText(f, w))
	if fenceRefused(err) {
		return f.Taken()
	}
	return s.mapErr(op, err, onFK)
}

// pipelines reports whether batch may go in one round trip: the dialect
// pipelines and every write of it is text.
func (c *committer) pipelines(batch []*job) bool {
	if c.s.features.Pipeline == nil {
		return false
	}
	for _, j := range batch {
		if j.text == nil {
			return false
		}
	}
	return true
}

// runPipelined commits batch, every write of it text, in as few round trips
// as it can: all together; when one write fails, the others again together
// without it, and it alone after them, so its error is its own. When the
// transaction fails as a whole, every write runs alone.
func (c *committer) runPipelined(batch []*job) {
	for len(batch) > 1 {
		failed, _ := c.pipelined(batch)
		if failed < 0 {
			return
		}
		if failed >= len(batch) {
			break
		}
		retry := batch[failed]
		batch = append(batch[:failed:failed], batch[failed+1:]...)
		defer c.pipelinedAlone(retry)
	}
	for _, j := range batch {
		c.pipelinedAlone(j)
	}
}

// pipelinedAlone commits one write in a transaction of its own and answers
// it, running it again when it met a conflict (alone).
func (c *committer) pipelinedAlone(j *job) {
	failed := -1
	err := c.againOnConflict(func() error {
		var err error
		failed, err = c.pipelined([]*job{j})
		return err
	})
	if failed >= 0 {
		j.finish(err)
	}
}

// pipelined runs batch in one round trip. On success it answers every
// write (with its check's verdict) and returns -1. Otherwise it answers
// none and returns the index of the write that failed, or len(batch) when
// the transaction failed as a whole, with the error.
func (c *committer) pipelined(batch []*job) (failed int, err error) {
	n := 0
	for _, j := range batch {
		n += len(j.text.stmts)
	}
	stmts := make([]Stmt, 0, n)
	owner := make([]int, 0, n) // the write of each statement
	for i, j := range batch {
		stmts = append(stmts, j.text.stmts...)
		for range j.text.stmts {
			owner = append(owner, i)
		}
	}
	affected := make([]int64, n)
	var db *sql.DB
	if c.s.db != nil {
		db = c.s.db.DB
	}
	f, err := c.s.features.Pipeline.Pipeline(context.Background(), db, stmts, affected)
	if f >= 0 {
		if f >= n {
			return len(batch), err
		}
		return owner[f], err
	}
	at := 0
	for _, j := range batch {
		k := len(j.text.stmts)
		var cerr error
		if j.text.check != nil {
			cerr = j.text.check(affected[at : at+k])
		}
		at += k
		j.finish(cerr)
	}
	return -1, nil
}
