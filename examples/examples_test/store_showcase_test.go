package examplestest

import (
	"strings"
	"testing"

	"github.com/breadai/bread/stores/teststores"
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
			return map[string]string{"BREAD_STORE": "postgres", "DATABASE_URL": teststores.PostgresURL(t)}
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
