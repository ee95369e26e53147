// Package postgres is a core.BreadStore on PostgreSQL, through uptrace/bun
// (dialect/pgdialect) and pgx's database/sql driver.
//
// It implements every optional capability of the store port: CrumbLog,
// TaskRunStore, KnowledgeStore, DocumentStore, Migrator and io.Closer.
//
// New validates the options and parses the connection string (Options.URL,
// or DATABASE_URL when it is empty) without connecting; Migrate creates the
// bread_* tables. Payloads that must come back byte for byte are stored as
// json, not jsonb. An unreachable server is a STORE_UNAVAILABLE
// *core.BreadError naming host:port; no error ever carries the password.
//
// With Options.Embed, documents and knowledge nodes are embedded on write
// and searched by cosine similarity: through pgvector when Migrate can
// enable the extension, otherwise in a real[] column ranked in SQL. Without
// it, search is keyword (ILIKE).
//
//	s, err := postgres.New(postgres.Options{}) // reads DATABASE_URL
//	if err != nil { ... }
//	defer s.Close()
//	if err := s.Migrate(ctx); err != nil { ... }
package postgres
