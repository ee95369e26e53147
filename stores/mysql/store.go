package mysql

import (
	"database/sql"

	mysqldriver "github.com/go-sql-driver/mysql"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/mysqldialect"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/internal/bunstore"
)

// shared is the engine-independent store, whose methods Store promotes.
type shared = bunstore.Store

// Store is a core.BreadStore on MySQL or MariaDB. It is safe for concurrent
// use and for use by several processes sharing the database.
//
// Its methods are those of core.BreadStore, core.LoopStore, core.RunStore,
// core.RunLister, core.CrumbLog, core.TaskRunStore, core.KnowledgeStore,
// core.DocumentStore and core.Migrator (Migrate runs the steps of the
// migration history the database has not had, under a named lock; it is
// idempotent, and refuses a database migrated by a newer release with
// STORE_SCHEMA_TOO_NEW), plus:
//
//   - Close releases every connection. Later calls on the Store return a
//     STORE_CLOSED error; closing twice is not an error.
//   - DB returns the underlying *bun.DB, for applications that keep their
//     own tables beside bread's. Writes to the bread_* tables bypass the
//     store's checks.
//   - MigrationStatus lists the migration history, with when each step was
//     applied to this database.
//
// QueryKnowledge and SearchDocuments match with LIKE, ignoring case.
type Store struct {
	shared
	addr string // host:port, for error messages
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
	conn, err := mysqldriver.NewConnector(cfg.dsn)
	if err != nil {
		return nil, invalidConfig("the connection string's options are not usable")
	}
	sqldb := sql.OpenDB(conn)
	sqldb.SetMaxOpenConns(cfg.opts.MaxOpenConns)
	sqldb.SetMaxIdleConns(cfg.opts.MaxOpenConns)
	s := &Store{addr: cfg.addr}
	bunstore.Init(&s.shared, bun.NewDB(sqldb, noProbe{mysqldialect.New()}), dialect{s})
	return s, nil
}

// noProbe is bun's MySQL dialect without its Init, which would connect at
// once to ask the server's version (New never connects) and then enable
// what only MariaDB has (DELETE … RETURNING): the store runs the same
// statements on MySQL 8 and MariaDB, so what the tests run on one is what
// runs on the other.
type noProbe struct{ *mysqldialect.Dialect }

func (noProbe) Init(*sql.DB) {}

// RunCrumbLog implements core.RunCrumbWriter: WriteRun (the shared
// store's) appends a run write's crumbs to this store's own crumb log, in
// the write's one transaction. It is declared here, not promoted from the
// shared store, because core.Storage folds crumbs into run writes only
// when the writer's log is the crumb log it found: this Store.
func (s *Store) RunCrumbLog() core.CrumbLog { return s }
