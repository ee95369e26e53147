package bunstore

import (
	"context"

	"github.com/uptrace/bun"
)

// Dialect is what a database engine supplies to a Store: the few things the
// portable code cannot say in SQL every engine accepts. A Store calls it
// from many goroutines at once.
type Dialect interface {
	// Name names the store at the start of every error message, e.g.
	// "sqlite store".
	Name() string

	// Features says how the engine behaves and what it offers beyond the
	// portable core. The Store reads it once, in New.
	Features() Features

	// Schema is how the engine spells the table definitions (tables.go).
	// The Store reads it once, in Init.
	Schema() Schema

	// MigrationLock runs fn holding the lock that serialises Migrate
	// across every process sharing the database, with db the handle fn
	// must use: a transaction where the engine's DDL is transactional
	// (then everything fn does commits or rolls back together), a
	// connection holding a session lock otherwise. A process that dies
	// holding the lock releases it.
	MigrationLock(ctx context.Context, db *bun.DB, fn func(ctx context.Context, db bun.IDB) error) error

	// AfterMigrations runs under the migration lock after the history,
	// for what depends on the Store's options rather than on the layout
	// (PostgreSQL's embedding columns). committed, when not nil, is called
	// once MigrationLock has returned without error.
	AfterMigrations(ctx context.Context, db bun.IDB) (committed func(), err error)

	// ForeignKeyViolation reports whether err is a foreign-key violation,
	// and the error to keep as the cause of the *core.BreadError the
	// operation gives it (a missing session, loop, ...).
	ForeignKeyViolation(err error) (cause error, ok bool)

	// MapError classifies a driver error the Store did not recognise: the
	// Store has already passed nil, *core.BreadError and context errors
	// through, turned a closed database handle of a closed Store into
	// STORE_CLOSED, and given a foreign-key violation the meaning its
	// operation expects, when it has one. op names the operation for the
	// message. A nil result leaves err a STORE_ERROR naming op.
	MapError(op string, err error) error

	// Conflict reports whether err aborted its transaction for a conflict
	// with another transaction (a deadlock, a serialization failure): the
	// same transaction, run again, may well succeed. The committer runs a
	// write that failed so up to a few times before it reports the error.
	Conflict(err error) bool

	// InsertionOrder is the column that orders the rows of table by
	// insertion, which breaks ties between rows of one timestamp (or, for
	// bread_loop_iterations, of one index).
	InsertionOrder(table string) string

	// TagConditions are the WHERE conditions that keep the sessions
	// carrying every one of tags, matched against the JSON object in
	// bread_sessions.tags. No tags is no conditions.
	TagConditions(tags map[string]string) []Condition
}

// Features are the engine's behaviours and offers that the Store adapts to.
type Features struct {
	// SerializeWrites makes the writers of one Store queue for a single
	// write slot, in order and honouring their contexts, before they reach
	// the database. For an engine that admits one writer at a time
	// (SQLite), queueing here spares its lock's polling.
	SerializeWrites bool

	// Committers is how many transactions of batched writes may be in
	// flight at once (see committer); zero means one. An engine with one
	// writer at a time gains nothing from more; a server that commits
	// concurrently overlaps their round trips and flushes. PreparedWrites
	// makes it one.
	Committers int

	// PreparedWrites lets the Store prepare the statements every run
	// executes once per connection and reuse them, instead of sending bun's
	// SQL text with the arguments written into it; the statements are in
	// ? placeholders (see hotSQL).
	PreparedWrites bool

	// WritableCTEs says the engine runs a data-modifying statement inside
	// WITH and feeds its RETURNING rows to the main statement. AddMessage
	// then touches the session and inserts the message in one statement;
	// otherwise it runs both in one transaction.
	WritableCTEs bool

	// ILike is the operator that matches a LIKE pattern without regard to
	// case: "LIKE" on SQLite (ASCII letters only), "ILIKE" on PostgreSQL.
	ILike string

	// LikeEscape is the string literal of a backslash, the escape character
	// of the keyword patterns: '\' in standard SQL (the default when
	// empty), '\\' in MySQL, whose string literals escape with a
	// backslash.
	LikeEscape string

	// Pipeline, when not nil, sends the statements of a batch of the
	// committer in one round trip, as one transaction (see Pipeliner). The
	// writes every run makes are then given as statements (textWrite).
	Pipeline Pipeliner

	// Embedder, when not nil, is semantic search for knowledge nodes and
	// documents; without it they are found by keyword (ILike).
	Embedder Embedder
}

// Embedder is semantic search: knowledge node labels and document contents
// are embedded when written, and a non-empty query ranks them by the
// similarity of their embedding to its own.
type Embedder interface {
	// EmbedInsert adds the embedding of text to ins, an insert into table.
	// what names the text in errors ("a document").
	EmbedInsert(ctx context.Context, ins *bun.InsertQuery, table, what, text string) (*bun.InsertQuery, error)

	// RankBySimilarity keeps the rows of table that sel can rank and orders
	// them by the similarity of their embedding to that of query, most
	// similar first. what names the query in errors ("a document query").
	RankBySimilarity(ctx context.Context, sel *bun.SelectQuery, table, what, query string) (*bun.SelectQuery, error)
}

// Condition is one WHERE condition and its arguments, in bun's ?
// placeholders.
type Condition struct {
	Query string
	Args  []any
}
