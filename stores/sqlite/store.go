package sqlite

import (
	"context"
	"database/sql"
	"io"
	"sync/atomic"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" database/sql driver

	"github.com/breadai/bread/core"
)

// Store is a core.BreadStore on one SQLite database. It is safe for
// concurrent use, also by several processes sharing the file.
type Store struct {
	opts   Options
	db     *bun.DB
	closed atomic.Bool

	// writeSlot admits one writer of this Store at a time. SQLite admits
	// one writer per database anyway; queueing here, in order and
	// honouring the caller's context, spares the busy handler's polling,
	// which is unfair and can starve a writer past the busy timeout when
	// many connections contend. Other processes still queue on the busy
	// timeout.
	writeSlot chan struct{}
}

var (
	_ core.BreadStore     = (*Store)(nil)
	_ core.CrumbLog       = (*Store)(nil)
	_ core.TaskRunStore   = (*Store)(nil)
	_ core.KnowledgeStore = (*Store)(nil)
	_ core.DocumentStore  = (*Store)(nil)
	_ core.Migrator       = (*Store)(nil)
	_ io.Closer           = (*Store)(nil)
)

// New validates opts and returns a Store. It does not touch the database:
// the file is opened on first use, and Migrate creates the schema. A bad
// option is an INVALID_CONFIG *core.BreadError.
func New(opts Options) (*Store, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	sqldb, err := sql.Open("sqlite", opts.dsn())
	if err != nil {
		return nil, invalidConfig("cannot open the database: " + err.Error())
	}
	sqldb.SetMaxOpenConns(opts.MaxOpenConns)
	sqldb.SetMaxIdleConns(opts.MaxOpenConns)
	// An in-memory database dies with its connection: never retire it.
	sqldb.SetConnMaxLifetime(0)
	sqldb.SetConnMaxIdleTime(0)
	return &Store{opts: opts, db: bun.NewDB(sqldb, sqlitedialect.New()), writeSlot: make(chan struct{}, 1)}, nil
}

// Migrate creates the bread_* tables and indexes that do not exist yet. It
// is idempotent and runs in one transaction.
func (s *Store) Migrate(ctx context.Context) error {
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for _, stmt := range schema {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
	return s.mapErr("migrate", err, nil)
}

// Close releases every connection. Later calls on the Store return a
// STORE_CLOSED error; closing twice is not an error.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return s.db.Close()
}

// DB exposes the underlying bun handle, for applications that keep their
// own tables beside bread's. Writes to the bread_* tables bypass the
// store's checks.
func (s *Store) DB() *bun.DB { return s.db }

// write runs fn in one IMMEDIATE transaction and maps its error.
func (s *Store) write(ctx context.Context, op string, onFK *core.BreadError, fn func(ctx context.Context, tx bun.Tx) error) error {
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	return s.mapErr(op, s.db.RunInTx(ctx, nil, fn), onFK)
}

// lockWrites waits for this Store's write slot. It fails when the store is
// closed or ctx ends first.
func (s *Store) lockWrites(ctx context.Context) (unlock func(), err error) {
	if s.closed.Load() {
		return nil, errClosed
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
		return errClosed
	}
	return nil
}
