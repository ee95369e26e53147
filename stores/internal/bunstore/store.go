package bunstore

import (
	"context"
	"io"
	"sync/atomic"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"github.com/breadai/bread/core"
)

// Store is a core.BreadStore on a *bun.DB, with every optional capability.
// It is safe for concurrent use, also by several processes sharing the
// database.
type Store struct {
	errs
	d        Dialect
	features Features
	schema   Schema
	// schemaErr is a table definition the dialect's Schema cannot type;
	// Migrate reports it.
	schemaErr error
	clauses   clauses
	db        *bun.DB
	closed    atomic.Bool

	// writeSlot, with Features.SerializeWrites, admits one writer of this
	// Store at a time; nil otherwise. The committer holds it for each batch.
	writeSlot chan struct{}

	// commits runs the writes of write and insert: group commit.
	commits *committer
	// prepared, with Features.PreparedWrites, holds the hot statements.
	prepared *prepared
	// readers, with Features.PreparedWrites, holds the hot queries.
	readers *readers
}

// API is every method of a Store: the core ports it implements, Close and
// DB. A store type that embeds a Store asserts it keeps them all.
type API interface {
	core.BreadStore
	core.LoopStore
	core.RunStore
	core.SessionStarters
	core.CrumbLog
	core.TaskRunStore
	core.KnowledgeStore
	core.DocumentStore
	core.EvalRunStore
	core.Migrator
	io.Closer
	DB() *bun.DB
	MigrationStatus(ctx context.Context) (migrate.MigrationSlice, error)
}

var _ API = (*Store)(nil)

// clauses are the SQL fragments that depend on the dialect, built once: the
// ORDER BY expressions of the listings, with the dialect's insertion-order
// column breaking ties, and the keyword-search conditions.
type clauses struct {
	sessions, checkpoints, loops, iterations, taskRuns, nodes, documents, subs string // ORDER BY

	labelMatch, documentMatch string // WHERE, with a likePattern for each ?
}

func newClauses(d Dialect, f Features) clauses {
	asc := func(first, table string) string { return first + " ASC, " + d.InsertionOrder(table) + " ASC" }
	desc := func(first, table string) string { return first + " DESC, " + d.InsertionOrder(table) + " DESC" }
	escape := f.LikeEscape
	if escape == "" {
		escape = `'\'`
	}
	match := func(column string) string { return column + " " + f.ILike + " ? ESCAPE " + escape }
	return clauses{
		sessions:    asc("created_at", "bread_sessions"),
		checkpoints: asc("created_at", "bread_checkpoints"),
		loops:       asc("started_at", "bread_loops"),
		iterations:  asc("idx", "bread_loop_iterations"),
		taskRuns:    desc("created_at", "bread_task_runs"),
		nodes:       desc("created_at", "bread_kg_nodes"),
		documents:   desc("created_at", "bread_documents"),
		subs:        asc("created_at", "bread_run_subscriptions"),

		labelMatch:    match("label"),
		documentMatch: "(" + match("title") + " OR " + match("content") + ")",
	}
}

// Init readies s, a zero Store, to run on db through d. s owns db from then
// on: Close closes it. Init does not touch the database.
//
// A dialect's store type embeds a Store by value and calls Init from its
// constructor, so the Store's methods become its own, on the pointer only,
// and no exported field appears.
func Init(s *Store, db *bun.DB, d Dialect) {
	f := d.Features()
	s.errs, s.d, s.features, s.clauses, s.db = newErrs(d.Name()), d, f, newClauses(d, f), db
	s.schema = d.Schema()
	if db != nil {
		s.schemaErr = applyTypes(db, s.schema)
	}
	if f.SerializeWrites {
		s.writeSlot = make(chan struct{}, 1)
	}
	if f.PreparedWrites {
		s.prepared, s.readers = new(prepared), new(readers)
	}
	loops := f.Committers
	if f.PreparedWrites {
		// The hot statements belong to the one committer goroutine.
		loops = 1
	}
	s.commits = newCommitter(s, loops)
}

// Close releases every connection. Later calls on the Store return a
// STORE_CLOSED error; closing twice is not an error. Writes queued for the
// next shared transaction fail with STORE_CLOSED; the one in flight
// commits first.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.commits.stop()
	s.prepared.close()
	s.readers.close()
	return s.db.Close()
}

// Ping checks the database answers within ctx (core.Pinger): a readiness
// probe's question. A closed Store reports STORE_CLOSED.
func (s *Store) Ping(ctx context.Context) error {
	if s.closed.Load() {
		return s.storeClosed
	}
	if err := s.db.PingContext(ctx); err != nil {
		return &core.BreadError{Code: core.CodeStoreUnavailable, Message: s.prefix + "the database does not answer", Cause: err}
	}
	return nil
}

// DB exposes the underlying bun handle, for applications that keep their
// own tables beside bread's. Writes to the bread_* tables bypass the
// store's checks.
func (s *Store) DB() *bun.DB { return s.db }

// write runs fn in a transaction, shared with the other writes queued at
// the time (group commit, see committer), and maps its error. fn must
// write through tx only, and must not wait on anything but the database:
// every writer of the Store waits for its batch.
func (s *Store) write(ctx context.Context, op string, onFK *core.BreadError, fn func(ctx context.Context, tx bun.Tx) error) error {
	if s.closed.Load() {
		return s.storeClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if f, ok, err := runFence(ctx); err != nil {
		return err
	} else if ok {
		fn = s.fenced(f, fn)
	}
	return s.mapErr(op, s.commits.do(ctx, fn), onFK)
}

// insert writes one model (a row, or a slice of rows in one statement)
// through write and maps the error as op; onFK is the error for a
// foreign-key violation.
func (s *Store) insert(ctx context.Context, op string, model any, onFK *core.BreadError) error {
	return s.write(ctx, op, onFK, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewInsert().Model(model).Exec(ctx)
		return err
	})
}

// lockWrites checks the store is open and, with Features.SerializeWrites,
// waits for the write slot. It fails when the store is closed or ctx ends
// first.
func (s *Store) lockWrites(ctx context.Context) (unlock func(), err error) {
	if s.closed.Load() {
		return nil, s.storeClosed
	}
	if s.writeSlot == nil {
		return func() {}, nil
	}
	select {
	case s.writeSlot <- struct{}{}:
		return func() { <-s.writeSlot }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// read checks the store is open before a query.
func (s *Store) read() error {
	if s.closed.Load() {
		return s.storeClosed
	}
	return nil
}
