package sqlite

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/breadai/bread/stores/internal/bunstore"
)

// dialect is what SQLite brings to bunstore: its schema, its error codes,
// rowid, json_each and a writer at a time.
type dialect struct {
	opts Options
}

func (dialect) Name() string { return "sqlite store" }

func (dialect) Features() bunstore.Features {
	return bunstore.Features{
		// SQLite admits one writer per database anyway; queueing in the
		// Store, in order and honouring the caller's context, spares the
		// busy handler's polling, which is unfair and can starve a writer
		// past the busy timeout when many connections contend. Other
		// processes still queue on the busy timeout.
		SerializeWrites: true,
		// modernc.org/sqlite keeps a prepared statement and only binds and
		// steps it on each execution.
		PreparedWrites: true,
		// SQLite's LIKE ignores the case of ASCII letters.
		ILike: "LIKE",
	}
}

// Schema is SQLite's spelling of the tables: every text and JSON column
// TEXT (a declared JSON type would get NUMERIC affinity, which turns the
// text 42 into the integer 42), every integer INTEGER, no insertion-order
// column (the implicit rowid is one), and the messages' seq the rowid
// itself.
func (dialect) Schema() bunstore.Schema {
	return bunstore.Schema{
		Types: map[bunstore.Kind]string{
			bunstore.KindID: "TEXT", bunstore.KindText: "TEXT", bunstore.KindJSON: "TEXT", bunstore.KindTags: "TEXT",
			bunstore.KindInt: "INTEGER", bunstore.KindBigInt: "INTEGER",
		},
		MessageSeq: "seq INTEGER PRIMARY KEY AUTOINCREMENT",
		Columns:    columns,
	}
}

// columns lists the columns of table (none when it does not exist).
func columns(ctx context.Context, db bun.IDB, table string) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		have[name] = true
	}
	return have, rows.Err()
}

// MigrationLock runs fn in one transaction, which begins IMMEDIATE (the
// DSN's _txlock): it holds the database's write lock from its first
// statement, so a second process migrating waits for it (up to the busy
// timeout), then finds the history applied. SQLite's DDL is
// transactional: a failed Migrate leaves the database as it was.
//
// A transaction that meets SQLITE_BUSY is run again until the busy timeout
// has passed: SQLite returns it at once, without the busy handler's wait,
// where waiting could deadlock, and two stores migrating a new file at
// once meet such a case (each connection's DSN pragmas turn the file to
// WAL as it opens): TestMigrationHistory failed in 0.2 s with a 5 s busy
// timeout, a few runs in a hundred, in CI too.
func (d dialect) MigrationLock(ctx context.Context, db *bun.DB, fn func(ctx context.Context, db bun.IDB) error) error {
	deadline := time.Now().Add(d.opts.BusyTimeout)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return fn(ctx, tx) })
		if !busy(err) || time.Now().Add(wait).After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// busy says err is SQLite's SQLITE_BUSY: the database was locked.
func busy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// AfterMigrations has nothing to do on SQLite.
func (dialect) AfterMigrations(context.Context, bun.IDB) (func(), error) { return nil, nil }

// InsertionOrder is SQLite's implicit rowid, larger than every rowid
// present when a row is inserted.
func (dialect) InsertionOrder(string) string { return "rowid" }

// TagConditions match each tag with json_each, which compares keys as plain
// strings, so a key may hold any character, dots and quotes too.
func (dialect) TagConditions(tags map[string]string) []bunstore.Condition {
	conds := make([]bunstore.Condition, 0, len(tags))
	for k, v := range tags {
		conds = append(conds, bunstore.Condition{
			Query: "EXISTS (SELECT 1 FROM json_each(tags) WHERE json_each.key = ? AND json_each.type = 'text' AND json_each.value = ?)",
			Args:  []any{k, v},
		})
	}
	return conds
}
