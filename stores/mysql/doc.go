// Package mysql is a core.BreadStore on MySQL 8 and MariaDB 10.6 or later,
// through uptrace/bun (dialect/mysqldialect) and go-sql-driver/mysql.
//
// It implements every optional capability of the store port, as
// stores/sqlite and stores/postgres do: the crumb log, run records and
// leases, claims, joins, loops, task runs, knowledge, documents, the run
// lister, Migrator and io.Closer. It shares their implementation
// (stores/internal/bunstore) and their migration history.
//
// New validates the options and parses the connection string (Options.URL,
// or DATABASE_URL when it is empty) without connecting; Migrate creates the
// bread_* tables. An unreachable server is a STORE_UNAVAILABLE
// *core.BreadError naming host:port; no error carries the password.
//
//	s, err := mysql.New(mysql.Options{URL: "bread:secret@tcp(db:3306)/bread"})
//	if err != nil { ... }
//	defer s.Close()
//	if err := s.Migrate(ctx); err != nil { ... }
package mysql
