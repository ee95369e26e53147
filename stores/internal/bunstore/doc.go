// Package bunstore is the part of bread's SQL stores that does not depend on
// the database engine: the bun row models of the bread_* tables, their
// conversions to and from core's records, and a Store implementing
// core.BreadStore and every optional capability (CrumbLog, TaskRunStore,
// KnowledgeStore, DocumentStore, Migrator, io.Closer) over a *bun.DB.
//
// What differs between engines sits behind Dialect, the way database/sql
// sits over a driver: the schema and its migration, the classification of
// driver errors, the column that keeps insertion order, the session tag
// filter, the keyword-search operator, whether writers queue in the process,
// whether a data-modifying statement can feed another in one WITH, and,
// optionally, semantic search (Embedder). stores/sqlite and stores/postgres
// each supply a Dialect and embed the Store in their own Store type.
//
// The package is internal to stores/: applications use stores/sqlite or
// stores/postgres. Its behaviour is tested through them, by the shared
// conformance suite (core/storetest) and by bunstoretest, which holds the
// checks both stores run.
package bunstore
