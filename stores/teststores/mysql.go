package teststores

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"sync"
	"testing"

	mysqldriver "github.com/go-sql-driver/mysql"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/mysql"
)

func openMySQL(tb testing.TB) core.BreadStore {
	tb.Helper()
	s, err := mysql.New(mysql.Options{URL: MySQLURL(tb), MaxOpenConns: 4})
	if err != nil {
		tb.Fatalf("mysql.New: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(tb.Context()); err != nil {
		tb.Fatalf("mysql Migrate: %v", err)
	}
	return s
}

// MySQLURL creates an empty database bread_test_<random> on the server of
// BREAD_TEST_MYSQL_URL (a go-sql-driver DSN), dropped with everything in it
// when the test ends, and returns the DSN naming it. Without the variable
// the test skips, or fails under BREAD_TEST_REQUIRE=1.
func MySQLURL(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv("BREAD_TEST_MYSQL_URL")
	if base == "" {
		msg := "BREAD_TEST_MYSQL_URL is not set: the mysql case needs a MySQL or MariaDB server " +
			"(e.g. BREAD_TEST_MYSQL_URL='root@tcp(127.0.0.1:3306)/test')"
		if os.Getenv("BREAD_TEST_REQUIRE") == "1" {
			tb.Fatal(msg + ", and BREAD_TEST_REQUIRE=1 forbids skipping")
		}
		tb.Skip(msg)
	}
	cfg, err := mysqldriver.ParseDSN(base)
	if err != nil {
		tb.Fatalf("BREAD_TEST_MYSQL_URL is not a DSN: %v", err)
	}
	db, err := mysqlAdminDB(cfg.FormatDSN())
	if err != nil {
		tb.Fatalf("open BREAD_TEST_MYSQL_URL: %v", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "bread_test_" + hex.EncodeToString(b[:])
	if _, err := db.ExecContext(tb.Context(), "CREATE DATABASE "+name+" CHARACTER SET utf8mb4"); err != nil {
		tb.Fatalf("CREATE DATABASE %s: %v", name, err)
	}
	tb.Cleanup(func() {
		if _, err := db.Exec("DROP DATABASE " + name); err != nil {
			tb.Errorf("DROP DATABASE %s: %v", name, err)
		}
	})
	cfg.DBName = name
	return cfg.FormatDSN()
}

// mysqlAdmin is one pool for every test's database setup, for the life of
// the test binary.
var mysqlAdmin struct {
	once sync.Once
	db   *sql.DB
	err  error
}

func mysqlAdminDB(dsn string) (*sql.DB, error) {
	mysqlAdmin.once.Do(func() {
		mysqlAdmin.db, mysqlAdmin.err = sql.Open("mysql", dsn)
		if mysqlAdmin.err == nil {
			mysqlAdmin.db.SetMaxOpenConns(2)
		}
	})
	return mysqlAdmin.db, mysqlAdmin.err
}
