package bench_test

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for the schema's setup

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/mysql"
	"github.com/breadai/bread/stores/postgres"
	"github.com/breadai/bread/stores/teststores"
)

// postgresStore is a PostgreSQL store in a fresh schema of the server
// BREAD_TEST_POSTGRES_URL names (a postgres:// URL), dropped at cleanup; the
// benchmark is skipped without it.
func postgresStore(b *testing.B) core.BreadStore {
	s, _ := postgresStoreNamed(b)
	return s
}

// postgresStoreNamed is postgresStore, and the name of its schema, which is
// also its connections' application_name (pg_stat_activity tells them).
func postgresStoreNamed(b *testing.B) (core.BreadStore, string) {
	base := os.Getenv("BREAD_TEST_POSTGRES_URL")
	if base == "" {
		b.Skip("BREAD_TEST_POSTGRES_URL is not set")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = admin.Close() })
	var r [6]byte
	_, _ = rand.Read(r[:])
	schema := "bread_bench_" + hex.EncodeToString(r[:])
	if _, err := admin.ExecContext(b.Context(), "CREATE SCHEMA "+schema); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE") })
	u, err := url.Parse(base)
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	q.Set("application_name", schema)
	u.RawQuery = q.Encode()
	s, err := postgres.New(postgres.Options{URL: u.String()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s, schema
}

// mysqlStore is a MySQL store in a fresh database of the server
// BREAD_TEST_MYSQL_URL names, dropped at cleanup; the benchmark is skipped
// without it.
func mysqlStore(b *testing.B) core.BreadStore {
	if os.Getenv("BREAD_TEST_MYSQL_URL") == "" {
		b.Skip("BREAD_TEST_MYSQL_URL is not set")
	}
	s, err := mysql.New(mysql.Options{URL: teststores.MySQLURL(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}
