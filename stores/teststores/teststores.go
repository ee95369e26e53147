package teststores

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, for schema setup

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/stores/postgres"
	"github.com/breadai/bread/stores/sqlite"
)

// Store is one kind of store a test can run on.
type Store struct {
	// Name is "memory", "sqlite", "postgres" or "mysql": the subtest's name.
	Name string
	// Open returns a new, empty, migrated store, closed when the test ends.
	// The PostgreSQL one skips the test without BREAD_TEST_POSTGRES_URL,
	// the MySQL one without BREAD_TEST_MYSQL_URL (each fails it under
	// BREAD_TEST_REQUIRE=1).
	Open func(tb testing.TB) core.BreadStore
}

// All lists the stores, memory first.
func All() []Store {
	return []Store{
		{Name: "memory", Open: func(testing.TB) core.BreadStore { return memory.New() }},
		{Name: "sqlite", Open: openSQLite},
		{Name: "postgres", Open: openPostgres},
		{Name: "mysql", Open: openMySQL},
	}
}

// Each runs f once per store, as a subtest named after it.
func Each(t *testing.T, f func(t *testing.T, s Store)) {
	t.Helper()
	for _, s := range All() {
		t.Run(s.Name, func(t *testing.T) { f(t, s) })
	}
}

func openSQLite(tb testing.TB) core.BreadStore {
	tb.Helper()
	s, err := sqlite.New(sqlite.Options{Path: filepath.Join(tb.TempDir(), "bread.db")})
	if err != nil {
		tb.Fatalf("sqlite.New: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(tb.Context()); err != nil {
		tb.Fatalf("sqlite Migrate: %v", err)
	}
	return s
}

func openPostgres(tb testing.TB) core.BreadStore {
	tb.Helper()
	s, err := postgres.New(postgres.Options{URL: PostgresURL(tb), MaxOpenConns: 4})
	if err != nil {
		tb.Fatalf("postgres.New: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(tb.Context()); err != nil {
		tb.Fatalf("postgres Migrate: %v", err)
	}
	return s
}

// PostgresURL creates an empty schema bread_test_<random> on the server of
// BREAD_TEST_POSTGRES_URL, dropped with everything in it when the test
// ends, and returns the server's URL with search_path set to it: each test
// has tables of its own, so tests of every module (and of other worktrees)
// share one database in parallel. Without the variable the test skips, or
// fails under BREAD_TEST_REQUIRE=1.
func PostgresURL(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv("BREAD_TEST_POSTGRES_URL")
	if base == "" {
		msg := "BREAD_TEST_POSTGRES_URL is not set: the postgres case needs a PostgreSQL server " +
			"(e.g. BREAD_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable)"
		if os.Getenv("BREAD_TEST_REQUIRE") == "1" {
			tb.Fatal(msg + ", and BREAD_TEST_REQUIRE=1 forbids skipping")
		}
		tb.Skip(msg)
	}
	db, err := adminDB(base)
	if err != nil {
		tb.Fatalf("open BREAD_TEST_POSTGRES_URL: %v", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "bread_test_" + hex.EncodeToString(b[:])
	if _, err := db.ExecContext(tb.Context(), "CREATE SCHEMA "+schema); err != nil {
		tb.Fatalf("CREATE SCHEMA %s: %v", schema, err)
	}
	tb.Cleanup(func() {
		// tb.Context is cancelled by the time cleanups run. The stores the
		// test opened close first (cleanups run last in, first out).
		if _, err := db.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			tb.Errorf("DROP SCHEMA %s: %v", schema, err)
		}
	})
	return withSearchPath(tb, base, schema)
}

// admin is one pool for every test's schema setup, for the life of the
// test binary.
var admin struct {
	once sync.Once
	db   *sql.DB
	err  error
}

func adminDB(url string) (*sql.DB, error) {
	admin.once.Do(func() {
		admin.db, admin.err = sql.Open("pgx", url)
		if admin.err == nil {
			admin.db.SetMaxOpenConns(2)
		}
	})
	return admin.db, admin.err
}

// withSearchPath adds search_path to a URL or a keyword/value string; pgx
// sends it to the server as a run-time parameter.
func withSearchPath(tb testing.TB, conn, schema string) string {
	tb.Helper()
	if !strings.HasPrefix(conn, "postgres://") && !strings.HasPrefix(conn, "postgresql://") {
		return conn + " search_path=" + schema
	}
	u, err := url.Parse(conn)
	if err != nil {
		tb.Fatalf("BREAD_TEST_POSTGRES_URL does not parse: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
