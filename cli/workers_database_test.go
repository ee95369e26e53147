package cli_test

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/breadai/bread/stores/teststores"
)

// queueProject is a MySQL-store project whose job queue is on database
// (a workers.database component): a fast agent for background runs and a
// schedule ticking every second.
func queueProject(t *testing.T, database string) string {
	return project(t, map[string]string{
		"bread.yaml": `store: {type: mysql, url: "${DB_URL}"}
workers:
  pollInterval: 50ms
  database: ` + database + `
providers: {replay: {mode: conversation}}
schedules:
  - {name: tick, every: 1s, agent: ticker, input: tick}
`,
		"agents/fast/agent.yaml":   "model: {provider: replay, model: t/fast.jsonl}\n",
		"agents/ticker/agent.yaml": "model: {provider: replay, model: t/fast.jsonl}\n",
		"t/fast.jsonl":             transcript("done"),
	})
}

// checkQueueBesideMySQL serves dir (a queueProject) with `bread start` and
// holds it to the split: a background run and a schedule tick run to
// completion once each, their records and crumbs in MySQL, their jobs in
// the queue's database (queue, read with ? placeholders unless pg).
func checkQueueBesideMySQL(t *testing.T, dir string, env []string, store *sql.DB, queue *sql.DB, pg bool) {
	replica := startReplica(t, dir, env)
	c := jobsCheck{t: t, db: store}
	ids := startBackground(t, []string{replica.base}, "fast", 3)
	waitFor(t, time.Minute, "3 background runs completed", func() bool {
		return c.count("SELECT count(*) FROM bread_runs WHERE agent_id = 'fast' AND status = 'completed'") == 3
	})
	c.checkRanOnce(ids)
	from := c.firing()
	c.checkTicks(from, from.Add(2*time.Second))

	// The jobs are River's, in the other database: one per run (a tick's
	// key is its run id too), all completed.
	q := jobsCheck{t: t, db: queue, pg: pg}
	for _, id := range ids {
		if n := q.count("SELECT count(*) FROM river_job WHERE state = 'completed' AND "+argsKey(pg)+" = ?", id); n != 1 {
			t.Fatalf("run %s: %d completed jobs in the queue's database, want 1", id, n)
		}
	}
	if n := c.count("SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE 'river%'"); n != 0 {
		t.Fatalf("%d River tables in the MySQL store's database", n)
	}
}

// argsKey is the SQL of a River job's key (the args' "key").
func argsKey(pg bool) string {
	if pg {
		return "args->>'key'"
	}
	return "json_extract(args, '$.key')"
}

// TestAMySQLStoreQueuesOnPostgres: a MySQL store with workers.database on
// PostgreSQL, over the binary. River migrates and runs its queue in the
// PostgreSQL schema; background runs and a schedule's ticks complete once
// each, recorded in MySQL.
func TestAMySQLStoreQueuesOnPostgres(t *testing.T) {
	dbURL := teststores.MySQLURL(t)
	pgURL := teststores.PostgresURL(t) // search_path: a fresh schema
	store, err := sql.Open("mysql", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	queue, err := sql.Open("pgx", pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer queue.Close()
	dir := queueProject(t, `{type: postgres, url: "${QUEUE_URL}"}`)
	checkQueueBesideMySQL(t, dir, []string{"DB_URL=" + dbURL, "QUEUE_URL=" + pgURL}, store, queue, true)
}

// TestAMySQLStoreQueuesOnSQLite is the same with workers.database a SQLite
// file of the project.
func TestAMySQLStoreQueuesOnSQLite(t *testing.T) {
	dbURL := teststores.MySQLURL(t)
	store, err := sql.Open("mysql", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	dir := queueProject(t, `{type: sqlite, path: ./jobs.db}`)
	queue, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "jobs.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer queue.Close()
	checkQueueBesideMySQL(t, dir, []string{"DB_URL=" + dbURL}, store, queue, false)
}
