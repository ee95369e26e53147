package examplestest

import (
	"os"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/teststores"
)

// mariadbNATS is the MariaDB + NATS configuration of the showcase: a fresh
// database on BREAD_TEST_MYSQL_URL's server and the NATS of
// BREAD_TEST_NATS_URL (skipped without them, failed under
// BREAD_TEST_REQUIRE=1).
func mariadbNATS(t *testing.T) map[string]string {
	t.Helper()
	nats := os.Getenv("BREAD_TEST_NATS_URL")
	if nats == "" {
		msg := "BREAD_TEST_NATS_URL is not set (e.g. nats://127.0.0.1:4222): the mariadb+nats showcase needs NATS with JetStream"
		if os.Getenv("BREAD_TEST_REQUIRE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return map[string]string{"BREAD_STORE": "mysql", "DATABASE_URL": teststores.MySQLURL(t), "BREAD_BUS": "nats", "NATS_URL": nats}
}

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
		{"mariadb+nats", mariadbNATS, true},
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
	t.Run("mariadb+nats: served on one replica, resumed on another", func(t *testing.T) {
		t.Parallel()
		dir := copyExample(t, "store-showcase")
		env := mariadbNATS(t)
		a, b := startServer(t, dir, env), startServer(t, dir, env)
		if got := text(runEnd(t, stream(t, a.URL+"/agents/echo/run", `{"input":"hello"}`, nil), "echo").Output); got != "echo: hello" {
			t.Errorf("echo served on A: %q", got)
		}
		crumbs := stream(t, a.URL+"/agents/signoff/run", `{"input":"hello"}`, nil)
		humans := crumbsOf[*core.HumanRequired](crumbs)
		if len(humans) != 1 {
			t.Fatalf("the run on A did not suspend for a human: %s", crumbTypes(crumbs))
		}
		crumbs = stream(t, b.URL+"/resume/"+humans[0].CheckpointID, `{"response":{"ok":true}}`, nil)
		if first := crumbs[0]; first.CrumbType() != core.TypeHumanResumed || first.Base().RunID != humans[0].RunID {
			t.Fatalf("B's continuation starts with human:resumed of A's run: %s", crumbTypes(crumbs))
		}
		if got := text(runEnd(t, crumbs, "signoff").Output); got != "Signed off." {
			t.Errorf("the run resumed on B ended with %q", got)
		}
	})
	t.Run("an unknown store names the known ones", func(t *testing.T) {
		t.Parallel()
		r := bread(t, invocation{dir: copyExample(t, "store-showcase"), env: map[string]string{"BREAD_STORE": "bogus"}, args: []string{"invoke", "echo", "hello"}})
		if r.code == 0 || !strings.Contains(r.stderr, "bread.yaml:") || !strings.Contains(r.stderr, `unknown store "bogus"; known: memory, mysql, postgres, sqlite`) {
			t.Errorf("want a located error listing the stores: %s", r)
		}
	})
}
