package mysql_test

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"sync"
	"testing"

	mysqldriver "github.com/go-sql-driver/mysql"

	"github.com/breadai/bread/stores/mysql"
)

// serverDSN is the test server's DSN from BREAD_TEST_MYSQL_URL. Without it
// the test is skipped, or fails when BREAD_TEST_REQUIRE=1 says the server
// must be there.
func serverDSN(tb testing.TB) *mysqldriver.Config {
	tb.Helper()
	u := os.Getenv("BREAD_TEST_MYSQL_URL")
	if u == "" {
		msg := "BREAD_TEST_MYSQL_URL is not set: these tests need a MySQL or MariaDB server " +
			"(e.g. BREAD_TEST_MYSQL_URL='root@tcp(127.0.0.1:3306)/test')"
		if os.Getenv("BREAD_TEST_REQUIRE") == "1" {
			tb.Fatal(msg + ", and BREAD_TEST_REQUIRE=1 forbids skipping")
		}
		tb.Skip(msg)
	}
	cfg, err := mysqldriver.ParseDSN(u)
	if err != nil {
		tb.Fatalf("BREAD_TEST_MYSQL_URL is not a DSN: %v", err)
	}
	return cfg
}

// freshDatabaseURL creates an empty database bread_test_<random>, dropped
// with everything in it at cleanup, and returns the DSN naming it. Each
// test gets its own tables, so tests (and other packages' tests, and other
// runs) can share one server in parallel.
func freshDatabaseURL(tb testing.TB) string {
	tb.Helper()
	cfg := serverDSN(tb)
	db, err := adminDB(cfg)
	if err != nil {
		tb.Fatalf("open the test server: %v", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "bread_test_" + hex.EncodeToString(b[:])
	if _, err := db.ExecContext(tb.Context(), "CREATE DATABASE "+name+" CHARACTER SET utf8mb4"); err != nil {
		tb.Fatalf("CREATE DATABASE %s: %v", name, err)
	}
	tb.Cleanup(func() {
		// tb.Context is already cancelled when cleanups run.
		if _, err := db.Exec("DROP DATABASE " + name); err != nil {
			tb.Errorf("DROP DATABASE %s: %v", name, err)
		}
	})
	cfg = cfg.Clone()
	cfg.DBName = name
	return cfg.FormatDSN()
}

// admin is one pool for every test's database setup. It lives as long as
// the test binary.
var admin struct {
	once sync.Once
	db   *sql.DB
	err  error
}

func adminDB(cfg *mysqldriver.Config) (*sql.DB, error) {
	admin.once.Do(func() { admin.db, admin.err = sql.Open("mysql", cfg.FormatDSN()) })
	return admin.db, admin.err
}

// newStore opens a migrated store on a fresh database.
func newStore(tb testing.TB, o mysql.Options) *mysql.Store {
	tb.Helper()
	o.URL = freshDatabaseURL(tb)
	s, err := mysql.New(o)
	if err != nil {
		tb.Fatalf("mysql.New: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(tb.Context()); err != nil {
		tb.Fatalf("Migrate: %v", err)
	}
	return s
}
