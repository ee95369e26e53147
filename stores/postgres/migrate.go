package postgres

import (
	"context"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Migrate serialises concurrent Migrates with an advisory lock, creates the
// tables and indexes, adds the columns an older schema lacks and, with
// Options.Embed, the embedding columns, whose kinds the Store keeps once the
// transaction has committed.
func (d dialect) Migrate(ctx context.Context, tx bun.Tx) (func(), error) {
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", int64(migrateLockKey)); err != nil {
		return nil, err
	}
	// One round trip: the simple protocol runs a multi-statement text.
	if _, err := tx.ExecContext(ctx, strings.Join(schema, ";\n")); err != nil {
		return nil, err
	}
	if err := addMissingColumns(ctx, tx); err != nil {
		return nil, err
	}
	if d.s.opts.Embed == nil {
		return nil, nil
	}
	vectors, err := d.s.migrateVectors(ctx, tx)
	if err != nil {
		return nil, err
	}
	return func() {
		if vectors != nil {
			d.s.vectorsMu.Lock()
			d.s.vectors = vectors
			d.s.vectorsMu.Unlock()
		}
	}, nil
}

// addMissingColumns adds the columns of addedColumns that a table created
// by an older schema lacks.
func addMissingColumns(ctx context.Context, tx bun.Tx) error {
	have := map[[2]string]bool{}
	rows, err := tx.QueryContext(ctx, `SELECT c.relname::text, a.attname::text
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
WHERE c.oid IN (SELECT to_regclass(t) FROM unnest(?::text[]) AS t) AND a.attnum > 0 AND NOT a.attisdropped`,
		pgdialect.Array(addedTables()))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var table, column string
		if err := rows.Scan(&table, &column); err != nil {
			return err
		}
		have[[2]string{table, column}] = true
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range addedColumns {
		if have[[2]string{c.table, c.column}] {
			continue
		}
		if _, err := tx.ExecContext(ctx, "ALTER TABLE "+c.table+" ADD COLUMN IF NOT EXISTS "+c.column+" "+c.ddl); err != nil {
			return err
		}
	}
	return nil
}

func addedTables() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range addedColumns {
		if !seen[c.table] {
			seen[c.table] = true
			out = append(out, c.table)
		}
	}
	return out
}
