package postgres

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/breadai/bread/stores/internal/bunstore"
)

// Schema is PostgreSQL's spelling of the tables. Payloads bread must return
// byte for byte are json, which PostgreSQL validates but stores as the
// exact text it was given (jsonb would reorder keys, drop duplicate keys
// and reformat numbers); only session tags are jsonb, matched with @> and
// never returned as bytes, and GIN-indexed. The insertion-order column is
// an identity column, as is the messages' seq; id stays their primary key,
// as in the TypeScript bread's tables.
func (dialect) Schema() bunstore.Schema {
	return bunstore.Schema{
		Types: map[bunstore.Kind]string{
			bunstore.KindID: "TEXT", bunstore.KindText: "TEXT", bunstore.KindJSON: "JSON", bunstore.KindTags: "JSONB",
			bunstore.KindInt: "INTEGER", bunstore.KindBigInt: "BIGINT",
		},
		Serial:     func(name string) string { return name + " BIGINT GENERATED ALWAYS AS IDENTITY" },
		MessageSeq: "seq BIGINT GENERATED ALWAYS AS IDENTITY",
		Extra:      []string{`CREATE INDEX IF NOT EXISTS idx_bread_sessions_tags ON bread_sessions USING GIN (tags jsonb_path_ops)`},
		Columns:    columns,
	}
}

// columns lists the columns of table in the first schema of the
// search_path that has it (none when no schema does).
func columns(ctx context.Context, db bun.IDB, table string) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT a.attname::text FROM pg_attribute a
WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped`, table)
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

// migrateLockKey is the pg_advisory_xact_lock key that serialises Migrate
// across processes. ("bread" in ASCII.)
const migrateLockKey = 0x6272656164

// MigrationLock runs fn in one transaction that first takes an advisory
// lock: a second replica migrating at the same time waits for the first to
// commit, then finds the history applied. PostgreSQL's DDL is
// transactional, so a failed Migrate changes nothing, and a replica that
// dies mid-migration releases the lock with its connection.
func (dialect) MigrationLock(ctx context.Context, db *bun.DB, fn func(ctx context.Context, db bun.IDB) error) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", int64(migrateLockKey)); err != nil {
			return err
		}
		return fn(ctx, tx)
	})
}

// AfterMigrations adds, with Options.Embed, the embedding columns, whose
// kinds the Store keeps once the transaction has committed.
func (d dialect) AfterMigrations(ctx context.Context, db bun.IDB) (func(), error) {
	if d.s.opts.Embed == nil {
		return nil, nil
	}
	vectors, err := d.s.migrateVectors(ctx, db)
	if err != nil {
		return nil, err
	}
	return func() {
		d.s.vectorsMu.Lock()
		d.s.vectors = vectors
		d.s.vectorsMu.Unlock()
	}, nil
}
