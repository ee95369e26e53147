package riverjobs_test

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/jobs/river"
)

// serverURL is the test server's URL from BREAD_TEST_POSTGRES_URL. Without
// it the test is skipped, or fails when BREAD_TEST_REQUIRE=1 says the
// server must be there.
func serverURL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv("BREAD_TEST_POSTGRES_URL")
	if u == "" {
		msg := "BREAD_TEST_POSTGRES_URL is not set: the PostgreSQL tests need a server " +
			"(e.g. BREAD_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable)"
		if os.Getenv("BREAD_TEST_REQUIRE") == "1" {
			tb.Fatal(msg + ", and BREAD_TEST_REQUIRE=1 forbids skipping")
		}
		tb.Skip(msg)
	}
	return u
}

// adminDB opens the pool that creates and drops the tests' schemas, for
// the whole test; it is opened before any case so its goroutines are not
// taken for a queue's.
func adminDB(t *testing.T, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	if err := db.PingContext(t.Context()); err != nil {
		t.Fatalf("ping the PostgreSQL test server: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// freshSchema creates an empty schema bread_river_<random>, dropped with
// everything in it at cleanup, so tests share one database without seeing
// each other's jobs.
func freshSchema(tb testing.TB, admin *sql.DB) string {
	tb.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "bread_river_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(tb.Context(), "CREATE SCHEMA "+schema); err != nil {
		tb.Fatalf("CREATE SCHEMA %s: %v", schema, err)
	}
	tb.Cleanup(func() {
		if _, err := admin.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			tb.Errorf("DROP SCHEMA %s: %v", schema, err)
		}
	})
	return schema
}

// perTest gives each test one backend, made on its first use, that every
// queue of the test shares.
type perTest[T any] struct {
	mu sync.Mutex
	m  map[*testing.T]T
}

func (p *perTest[T]) get(t *testing.T, make func() T) T {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.m[t]; ok {
		return v
	}
	if p.m == nil {
		p.m = map[*testing.T]T{}
	}
	v := make()
	p.m[t] = v
	t.Cleanup(func() {
		p.mu.Lock()
		delete(p.m, t)
		p.mu.Unlock()
	})
	return v
}

// quietLogger keeps River's per-job info lines (a retry, a snooze) out of
// the test output, and its warnings and errors in.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// fastOptions poll and retry quickly, so the suite's waits are short.
func fastOptions(o riverjobs.Options) riverjobs.Options {
	o.PollInterval = 100 * time.Millisecond
	o.RetryBackoff = func(int) time.Duration { return 100 * time.Millisecond }
	o.Concurrency = 4
	o.Logger = quietLogger()
	return o
}

func openQueue(t *testing.T, o riverjobs.Options) core.JobQueue {
	t.Helper()
	q, err := riverjobs.Open(t.Context(), o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := q.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return q
}

// sqliteDB opens a SQLite file the way a program sharing it among its
// queues would: one connection, a busy timeout, WAL.
func sqliteDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func tempPath(tb testing.TB) string { return filepath.Join(tb.TempDir(), "jobs.db") }

func asBread(err error, target **core.BreadError) bool { return errors.As(err, target) }
