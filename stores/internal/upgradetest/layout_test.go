package upgradetest

import (
	"database/sql"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to load fixtures
	_ "modernc.org/sqlite"             // the "sqlite" driver, to load fixtures
)

// sqliteLayout describes every bread_* table of db: each column's type,
// NOT NULL, default and key position, and each index's columns and
// uniqueness, keyed by table.column and table index.
//
// A primary key column reads as NOT NULL: SQLite lets a TEXT PRIMARY KEY
// hold NULL unless it says NOT NULL, which v0's tables did not and new
// ones do; the store never writes a NULL key, so both are one layout.
func sqliteLayout(t *testing.T, db *sql.DB) map[string]string {
	out := map[string]string{}
	query(t, db, out, `SELECT m.name || '.' || c.name, c.type || ' notnull=' || MAX(c."notnull", c.pk > 0) || ' default=' || COALESCE(c.dflt_value, '') || ' pk=' || c.pk
FROM sqlite_master m, pragma_table_info(m.name) c WHERE m.type = 'table' AND m.name LIKE 'bread_%'`)
	query(t, db, out, `SELECT m.name || ' index ' || COALESCE(NULLIF(i.origin, 'c'), i.name), 'unique=' || i."unique" || ' (' || (SELECT group_concat(name, ', ') FROM pragma_index_info(i.name)) || ')'
FROM sqlite_master m, pragma_index_list(m.name) i WHERE m.type = 'table' AND m.name LIKE 'bread_%'`)
	return out
}

// postgresLayout is sqliteLayout for the current schema of a PostgreSQL
// database.
func postgresLayout(t *testing.T, db *sql.DB) map[string]string {
	out := map[string]string{}
	query(t, db, out, `SELECT table_name || '.' || column_name, data_type || ' nullable=' || is_nullable || ' default=' || COALESCE(column_default, '') || ' identity=' || COALESCE(identity_generation, '')
FROM information_schema.columns WHERE table_schema = current_schema() AND table_name LIKE 'bread_%'`)
	query(t, db, out, `SELECT tablename || ' index ' || indexname, replace(indexdef, current_schema() || '.', '')
FROM pg_indexes WHERE schemaname = current_schema() AND tablename LIKE 'bread_%'`)
	query(t, db, out, `SELECT conrelid::regclass::text || ' constraint ' || contype::text || ' ' || pg_get_constraintdef(oid), 'yes'
FROM pg_constraint WHERE connamespace = current_schema()::regnamespace AND conrelid::regclass::text LIKE 'bread_%'`)
	return out
}

func query(t *testing.T, db *sql.DB, out map[string]string, q string) {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), q)
	if err != nil {
		t.Fatalf("reading the layout: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}
