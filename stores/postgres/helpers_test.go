package postgres_test

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, for schema setup

	"github.com/breadai/bread/stores/postgres"
)

// serverURL is the test server's URL from BREAD_TEST_POSTGRES_URL. Without
// it the test is skipped, or fails when BREAD_TEST_REQUIRE=1 says the
// server must be there.
func serverURL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv("BREAD_TEST_POSTGRES_URL")
	if u == "" {
		msg := "BREAD_TEST_POSTGRES_URL is not set: these tests need a PostgreSQL server " +
			"(e.g. BREAD_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable)"
		if os.Getenv("BREAD_TEST_REQUIRE") == "1" {
			tb.Fatal(msg + ", and BREAD_TEST_REQUIRE=1 forbids skipping")
		}
		tb.Skip(msg)
	}
	return u
}

// freshSchemaURL creates an empty schema bread_test_<random>, dropped with
// everything in it at cleanup, and returns the server URL with search_path
// set to it. Each test gets its own tables, so tests (and other packages'
// tests) can share one database in parallel.
func freshSchemaURL(tb testing.TB) string {
	tb.Helper()
	base := serverURL(tb)
	admin, err := adminDB(base)
	if err != nil {
		tb.Fatalf("open %s: %v", redact(base), err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "bread_test_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(tb.Context(), "CREATE SCHEMA "+schema); err != nil {
		tb.Fatalf("CREATE SCHEMA %s: %v", schema, err)
	}
	tb.Cleanup(func() {
		// tb.Context is already cancelled when cleanups run.
		if _, err := admin.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			tb.Errorf("DROP SCHEMA %s: %v", schema, err)
		}
	})
	return withSearchPath(tb, base, schema)
}

// admin is one pool for every test's schema setup, instead of a connection
// per test. It lives as long as the test binary.
var admin struct {
	once sync.Once
	db   *sql.DB
	err  error
}

func adminDB(url string) (*sql.DB, error) {
	admin.once.Do(func() { admin.db, admin.err = sql.Open("pgx", url) })
	return admin.db, admin.err
}

// withSearchPath adds search_path to a URL or keyword/value string; pgx
// sends it to the server as a run-time parameter.
func withSearchPath(tb testing.TB, connString, schema string) string {
	tb.Helper()
	if !strings.HasPrefix(connString, "postgres://") && !strings.HasPrefix(connString, "postgresql://") {
		return connString + " search_path=" + schema
	}
	u, err := url.Parse(connString)
	if err != nil {
		tb.Fatalf("BREAD_TEST_POSTGRES_URL does not parse: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// newStore opens a migrated store on a fresh schema.
func newStore(tb testing.TB, o postgres.Options) *postgres.Store {
	tb.Helper()
	o.URL = freshSchemaURL(tb)
	s, err := postgres.New(o)
	if err != nil {
		tb.Fatalf("postgres.New: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(tb.Context()); err != nil {
		tb.Fatalf("Migrate: %v", err)
	}
	return s
}

func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "<connection string>"
	}
	return p.Redacted()
}
