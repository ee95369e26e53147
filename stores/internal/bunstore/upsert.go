package bunstore

import (
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/feature"
)

// The few statements SQL engines spell differently, chosen by what the
// bun dialect says the engine has, so a store inherits them with its bun
// dialect: ON CONFLICT (SQLite, PostgreSQL) or ON DUPLICATE KEY (MySQL);
// UPDATE and DELETE … RETURNING, or the statement and a read in one
// transaction where the engine has no RETURNING.

// onConflictUpdate makes q an upsert: when the row's key (the columns of
// key, comma-separated) exists, cols take the values q inserts. The
// columns are quoted: schema and usage are reserved words in MySQL.
func onConflictUpdate(db bun.IDB, q *bun.InsertQuery, key string, cols ...string) *bun.InsertQuery {
	if db.Dialect().Features().Has(feature.InsertOnConflict) {
		q = q.On("CONFLICT (" + key + ") DO UPDATE")
		for _, c := range cols {
			q = q.Set("? = EXCLUDED.?", bun.Ident(c), bun.Ident(c))
		}
		return q
	}
	q = q.On("DUPLICATE KEY UPDATE")
	for _, c := range cols {
		q = q.Set("? = VALUES(?)", bun.Ident(c), bun.Ident(c))
	}
	return q
}

// onConflictNothing makes q insert nothing when the row's key exists.
// MySQL's INSERT IGNORE would also turn every other error (a foreign key,
// a value too long) into a warning, so there it is an update that sets the
// key's first column to itself.
func onConflictNothing(db bun.IDB, q *bun.InsertQuery, key string) *bun.InsertQuery {
	if db.Dialect().Features().Has(feature.InsertOnConflict) {
		return q.On("CONFLICT (" + key + ") DO NOTHING")
	}
	first, _, _ := strings.Cut(key, ",")
	return q.On("DUPLICATE KEY UPDATE").Set(first + " = " + first)
}

// hasReturning reports whether db's engine returns the rows an UPDATE or
// DELETE changed.
func hasReturning(db bun.IDB) bool {
	return db.Dialect().Features().Has(feature.Returning)
}
