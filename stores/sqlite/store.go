package sqlite

import (
	"database/sql"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" database/sql driver

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/internal/bunstore"
)

// shared is the engine-independent store, whose methods Store promotes.
type shared = bunstore.Store

// Store is a core.BreadStore on one SQLite database. It is safe for
// concurrent use, also by several processes sharing the file.
//
// Its methods are those of core.BreadStore, core.CrumbLog,
// core.TaskRunStore, core.KnowledgeStore, core.DocumentStore and
// core.Migrator (Migrate runs the steps of the migration history the
// database has not had, in one transaction; it is idempotent, and refuses a
// database migrated by a newer release with STORE_SCHEMA_TOO_NEW), plus:
//
//   - Close releases every connection. Later calls on the Store return a
//     STORE_CLOSED error; closing twice is not an error.
//   - DB returns the underlying *bun.DB, for applications that keep their
//     own tables beside bread's. Writes to the bread_* tables bypass the
//     store's checks.
//   - MigrationStatus lists the migration history, with when each step was
//     applied to this database.
type Store struct {
	shared
	checkpoints *checkpointer // nil for ":memory:" or a negative CheckpointInterval
}

// Store keeps every method of the shared store.
var _ bunstore.API = (*Store)(nil)

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
	s := new(Store)
	bunstore.Init(&s.shared, bun.NewDB(sqldb, sqlitedialect.New()), dialect{opts: opts})
	if opts.checkpointsInBackground() {
		s.checkpoints = startCheckpointer(sqldb, opts.Path, opts.CheckpointInterval, opts.Logger)
	}
	return s, nil
}

// Close stops the WAL checkpointer, then closes the shared store: the
// writes in flight commit, and the last connection to close checkpoints
// the WAL into the database file. Later calls return STORE_CLOSED;
// closing twice is not an error.
func (s *Store) Close() error {
	s.checkpoints.close()
	return s.shared.Close()
}

// RunCrumbLog implements core.RunCrumbWriter: WriteRun (the shared
// store's) appends a run write's crumbs to this store's own crumb log, in
// the write's one transaction. It is declared here, not promoted from the
// shared store, because core.Storage folds crumbs into run writes only
// when the writer's log is the crumb log it found: this Store.
func (s *Store) RunCrumbLog() core.CrumbLog { return s }
