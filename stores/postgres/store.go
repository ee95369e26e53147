package postgres

import (
	"context"
	"database/sql"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/breadai/bread/core"
)

// Store is a core.BreadStore on PostgreSQL. It is safe for concurrent use
// and for use by several processes sharing the database.
type Store struct {
	opts   Options
	addr   string // host:port, for error messages
	db     *bun.DB
	closed atomic.Bool

	// vectors is how embeddings are stored, found by Migrate or, when
	// Migrate ran in another process, on first use.
	vectorsMu sync.Mutex
	vectors   map[string]vectorColumn // by table
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

// New validates opts and returns a Store. It does not connect: the first
// call that needs the database does, and Migrate creates the schema. A bad
// option or connection string is an INVALID_CONFIG *core.BreadError whose
// message never contains the password.
func New(opts Options) (*Store, error) {
	cfg, err := opts.parse()
	if err != nil {
		return nil, err
	}
	sqldb := sql.OpenDB(stdlib.GetConnector(*cfg.conn))
	sqldb.SetMaxOpenConns(cfg.opts.MaxOpenConns)
	sqldb.SetMaxIdleConns(cfg.opts.MaxOpenConns)
	return &Store{
		opts: cfg.opts,
		addr: cfg.addr,
		db:   bun.NewDB(sqldb, pgdialect.New()),
	}, nil
}

// Migrate creates the bread_* tables, indexes and missing columns in one
// transaction, and, with Options.Embed, the embedding columns (enabling
// pgvector when Options.Vectors allows). It is idempotent.
func (s *Store) Migrate(ctx context.Context) error {
	if s.closed.Load() {
		return errClosed
	}
	var vectors map[string]vectorColumn
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", int64(migrateLockKey)); err != nil {
			return err
		}
		// One round trip: the simple protocol runs a multi-statement text.
		if _, err := tx.ExecContext(ctx, strings.Join(schema, ";\n")); err != nil {
			return err
		}
		if err := addMissingColumns(ctx, tx); err != nil {
			return err
		}
		if s.opts.Embed == nil {
			return nil
		}
		var err error
		vectors, err = s.migrateVectors(ctx, tx)
		return err
	})
	if err != nil {
		return s.mapErr("migrate", err, nil)
	}
	if vectors != nil {
		s.vectorsMu.Lock()
		s.vectors = vectors
		s.vectorsMu.Unlock()
	}
	return nil
}

// addMissingColumns adds the columns of addedColumns that a table created
// by an older schema lacks.
func addMissingColumns(ctx context.Context, tx bun.Tx) error {
	have := map[[2]string]bool{}
	rows, err := tx.QueryContext(ctx, `SELECT c.relname::text, a.attname::text
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
WHERE c.oid IN (SELECT to_regclass(t) FROM unnest(?::text[]) AS t) AND a.attnum > 0 AND NOT a.attisdropped`,
		pgdialect.Array(addedTables()))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var table, column string
		if err := rows.Scan(&table, &column); err != nil {
			return err
		}
		have[[2]string{table, column}] = true
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range addedColumns {
		if have[[2]string{c.table, c.column}] {
			continue
		}
		if _, err := tx.ExecContext(ctx, "ALTER TABLE "+c.table+" ADD COLUMN IF NOT EXISTS "+c.column+" "+c.ddl); err != nil {
			return err
		}
	}
	return nil
}

func addedTables() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range addedColumns {
		if !seen[c.table] {
			seen[c.table] = true
			out = append(out, c.table)
		}
	}
	return out
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

// write runs fn in one transaction and maps its error.
func (s *Store) write(ctx context.Context, op string, onFK *core.BreadError, fn func(ctx context.Context, tx bun.Tx) error) error {
	if s.closed.Load() {
		return errClosed
	}
	return s.mapErr(op, s.db.RunInTx(ctx, nil, fn), onFK)
}

// read checks the store is open before a query.
func (s *Store) read() error {
	if s.closed.Load() {
		return errClosed
	}
	return nil
}
