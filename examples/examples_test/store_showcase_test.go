package examplestest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestStoreShowcase(t *testing.T) {
	t.Parallel()
	stores := []struct {
		name string
		// env selects the store (BREAD_STORE, and DATABASE_URL for postgres).
		env     func(t *testing.T) map[string]string
		durable bool
	}{
		{"memory", func(*testing.T) map[string]string { return map[string]string{"BREAD_STORE": "memory"} }, false},
		{"sqlite", func(*testing.T) map[string]string { return map[string]string{"BREAD_STORE": "sqlite"} }, true},
		{"postgres", func(t *testing.T) map[string]string {
			return map[string]string{"BREAD_STORE": "postgres", "DATABASE_URL": postgresStore(t)}
		}, true},
	}
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			dir := copyExample(t, "store-showcase")
			env := s.env(t)
			r := mustBread(t, invocation{dir: dir, env: env, args: []string{"invoke", "echo", "-s", "showcase", "hello"}})
			if r.stdout != "echo: hello\n" {
				t.Errorf("stdout %q, want %q", r.stdout, "echo: hello\n")
			}
			// What survives the process is the difference between stores.
			r = mustBread(t, invocation{dir: dir, env: env, args: []string{"sessions", "list"}})
			if listed := strings.Contains(r.stdout, "showcase  echo"); listed != s.durable {
				t.Errorf("session listed after the process ended: %v, want %v: %s", listed, s.durable, r)
			}
			mustBread(t, invocation{dir: dir, env: env, args: []string{"eval"}})
		})
	}
	t.Run("an unknown store names the known ones", func(t *testing.T) {
		t.Parallel()
		r := bread(t, invocation{dir: copyExample(t, "store-showcase"), env: map[string]string{"BREAD_STORE": "bogus"}, args: []string{"invoke", "echo", "hello"}})
		if r.code == 0 || !strings.Contains(r.stderr, "bread.yaml:") || !strings.Contains(r.stderr, `unknown store "bogus"; known: memory, mysql, postgres, sqlite`) {
			t.Errorf("want a located error listing the stores: %s", r)
		}
	})
}

// postgresStore is DATABASE_URL for a fresh schema of the test server,
// dropped at cleanup. Without
// BREAD_TEST_POSTGRES_URL the test skips, or fails under
// BREAD_TEST_REQUIRE=1.
func postgresStore(t *testing.T) string {
	base := os.Getenv("BREAD_TEST_POSTGRES_URL")
	if base == "" {
		msg := "BREAD_TEST_POSTGRES_URL is not set: the postgres case needs a PostgreSQL server " +
			"(e.g. BREAD_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable)"
		if os.Getenv("BREAD_TEST_REQUIRE") == "1" {
			t.Fatal(msg + ", and BREAD_TEST_REQUIRE=1 forbids skipping")
		}
		t.Skip(msg)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to BREAD_TEST_POSTGRES_URL: %v", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "bread_examples_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		conn.Close(ctx)
		t.Fatalf("CREATE SCHEMA %s: %v", schema, err)
	}
	t.Cleanup(func() {
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("DROP SCHEMA %s: %v", schema, err)
		}
		conn.Close(ctx)
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("BREAD_TEST_POSTGRES_URL is not a URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
