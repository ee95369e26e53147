package postgres

import (
	"database/sql"
	"sync"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/internal/bunstore"
)

// shared is the engine-independent store, whose methods Store promotes.
type shared = bunstore.Store

// Store is a core.BreadStore on PostgreSQL. It is safe for concurrent use
// and for use by several processes sharing the database.
//
// Its methods are those of core.BreadStore, core.CrumbLog,
// core.TaskRunStore, core.KnowledgeStore, core.DocumentStore and
// core.Migrator (Migrate runs the steps of the migration history the
// database has not had and, with Options.Embed, adds the embedding columns,
// enabling pgvector when Options.Vectors allows, all in one transaction
// under an advisory lock; it is idempotent, and refuses a database migrated
// by a newer release with STORE_SCHEMA_TOO_NEW), plus:
//
//   - Close releases every connection. Later calls on the Store return a
//     STORE_CLOSED error; closing twice is not an error.
//   - DB returns the underlying *bun.DB, for applications that keep their
//     own tables beside bread's. Writes to the bread_* tables bypass the
//     store's checks.
//   - MigrationStatus lists the migration history, with when each step was
//     applied to this database.
//
// QueryKnowledge and SearchDocuments rank by cosine similarity with
// Options.Embed and match with ILIKE without; an empty query lists the
// newest rows either way. AddMessage is one statement.
type Store struct {
	shared
	opts Options
	addr string // host:port, for error messages

	// vectors is how embeddings are stored, found by Migrate or, when
	// Migrate ran in another process, on first use.
	vectorsMu sync.Mutex
	vectors   map[string]vectorColumn // by table
}

// Store keeps every method of the shared store.
var _ bunstore.API = (*Store)(nil)

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
	s := &Store{opts: cfg.opts, addr: cfg.addr}
	bunstore.Init(&s.shared, bun.NewDB(sqldb, pgdialect.New()), dialect{s})
	return s, nil
}

// RunCrumbLog implements core.RunCrumbWriter: WriteRun (the shared
// store's) appends a run write's crumbs to this store's own crumb log, in
// the write's one transaction. It is declared here, not promoted from the
// shared store, because core.Storage folds crumbs into run writes only
// when the writer's log is the crumb log it found: this Store.
func (s *Store) RunCrumbLog() core.CrumbLog { return s }
