// Package sqlite is a core.BreadStore on SQLite, through uptrace/bun and the
// pure-Go modernc.org/sqlite driver (no cgo).
//
// It implements every optional capability of the store port: CrumbLog,
// TaskRunStore, KnowledgeStore, DocumentStore, Migrator and io.Closer.
// Knowledge and document search are keyword searches (LIKE); SQLite has no
// vector search here.
//
// Every connection opens with WAL journaling, a busy timeout and foreign keys
// on, and every write transaction begins IMMEDIATE, so concurrent writers in
// one process or several queue on the busy timeout instead of failing with
// SQLITE_BUSY. A Path of ":memory:" is an ephemeral database held by a single
// connection for the life of the Store.
//
//	s, err := sqlite.New(sqlite.Options{Path: "bread.db"})
//	if err != nil { ... }
//	defer s.Close()
//	if err := s.Migrate(ctx); err != nil { ... }
package sqlite
