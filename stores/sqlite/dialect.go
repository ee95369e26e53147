package sqlite

import (
	"context"

	"github.com/uptrace/bun"

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

// Migrate runs schema statement by statement.
func (dialect) Migrate(ctx context.Context, tx bun.Tx) (func(), error) {
	for _, stmt := range schema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return nil, err
		}
	}
	for _, c := range addedColumns {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM pragma_table_info(?) WHERE name = ?", c.table, c.column).Scan(&n); err != nil {
			return nil, err
		}
		if n == 0 {
			if _, err := tx.ExecContext(ctx, "ALTER TABLE "+c.table+" ADD COLUMN "+c.column+" "+c.ddl); err != nil {
				return nil, err
			}
		}
	}
	return nil, nil
}

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
