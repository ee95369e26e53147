package cli_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine"
)

// jobsProject is a project whose background runs go through the durable
// job queue: fast runs, a schedule ticking every second, and slow runs of
// two agents that differ only in their onLost policy. The lease is short
// and a job whose replica's heartbeat stops is rescued after 4 s, so a
// killed replica's runs come back quickly; the slow runs last 5 s, longer
// than that, so a live replica's long job must not be taken for dead.
func jobsProject(t *testing.T, store string) string {
	return project(t, map[string]string{
		"bread.yaml": store + `
workers: {concurrency: 8, pollInterval: 50ms, rescueAfter: 4s}
runs: {lease: 1s}
providers: {replay: {mode: conversation}}
schedules:
  - {name: tick, every: 1s, agent: ticker, input: tick}
`,
		"agents/fast/agent.yaml":    "model: {provider: replay, model: t/fast.jsonl}\n",
		"agents/ticker/agent.yaml":  "model: {provider: replay, model: t/fast.jsonl}\n",
		"agents/retrier/agent.yaml": "model: {provider: replay, model: t/slow.jsonl}\nonLost: {action: retry, maxAttempts: 2}\n",
		"agents/failer/agent.yaml":  "model: {provider: replay, model: t/slow.jsonl}\nonLost: fail\n",
		"t/fast.jsonl":              transcript("done"),
		"t/slow.jsonl": `{"call":0,"type":"text-delta","delta":"working","delayMs":10}
{"call":0,"type":"text-delta","delta":" done","delayMs":5000}
{"call":0,"type":"finish","finishReason":"stop"}
`,
	})
}

// jobsCheck reads the shared database the replicas write.
type jobsCheck struct {
	t  *testing.T
	db *sql.DB
	pg bool
}

func (c jobsCheck) q(query string) string {
	if c.pg {
		n := 0
		return stringsMap(query, func() string { n++; return fmt.Sprintf("$%d", n) })
	}
	return query
}

// stringsMap replaces each ? of query with next().
func stringsMap(query string, next func() string) string {
	var b strings.Builder
	for _, r := range query {
		if r == '?' {
			b.WriteString(next())
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (c jobsCheck) count(query string, args ...any) int {
	c.t.Helper()
	var n int
	if err := c.db.QueryRow(c.q(query), args...).Scan(&n); err != nil {
		c.t.Fatalf("%s: %v", query, err)
	}
	return n
}

func (c jobsCheck) record(runID string) (status string, attempt int, code string) {
	c.t.Helper()
	var a sql.NullInt64
	var e sql.NullString
	if err := c.db.QueryRow(c.q("SELECT status, attempt, error_code FROM bread_runs WHERE id = ?"), runID).Scan(&status, &a, &e); err != nil {
		c.t.Fatalf("record of %s: %v", runID, err)
	}
	return status, int(a.Int64), e.String
}

// starts counts the agent:run:start crumbs of an ended run, once its
// stream's end is logged: a run's record says how it ended a moment before
// its last crumbs reach the log.
func (c jobsCheck) starts(runID string) int {
	c.t.Helper()
	waitFor(c.t, 30*time.Second, "the logged end of run "+runID, func() bool {
		return c.count("SELECT count(*) FROM bread_crumbs WHERE run_id = ? AND type IN (?, ?)", runID, core.TypeAgentRunEnd, core.TypeAgentError) > 0
	})
	return c.count("SELECT count(*) FROM bread_crumbs WHERE run_id = ? AND type = ?", runID, core.TypeAgentRunStart)
}

// waitFor polls until ok, failing after d.
func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startBackground POSTs n background runs of agent, spread over bases, 16
// at a time, and returns their ids.
func startBackground(t *testing.T, bases []string, agent string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			base := bases[i%len(bases)]
			req, _ := http.NewRequest("POST", base+"/agents/"+agent+"/run", strings.NewReader(fmt.Sprintf(`{"input":"job %d"}`, i)))
			req.Header.Set("Prefer", "respond-async")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			var d core.Detached
			if resp.StatusCode != http.StatusAccepted || json.NewDecoder(resp.Body).Decode(&d) != nil || resp.Header.Get("Location") != "/runs/"+d.RunID {
				errs <- fmt.Errorf("POST %s: HTTP %d", base, resp.StatusCode)
				return
			}
			ids[i] = d.RunID
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return ids
}

// checkRanOnce holds every run of ids to completed, attempt 1, and one
// agent:run:start in its crumb log: each was executed exactly once.
func (c jobsCheck) checkRanOnce(ids []string) {
	c.t.Helper()
	for _, id := range ids {
		status, attempt, _ := c.record(id)
		if n := c.starts(id); status != "completed" || attempt != 1 || n != 1 {
			c.t.Fatalf("run %s: %s, attempt %d, %d agent:run:start; want completed once", id, status, attempt, n)
		}
	}
}

// checkTicks holds the schedule to exactly one run per tick from from to
// to: each tick's run (its id derived from the tick) exists and ran once,
// and every completed ticker run in the database is some tick's, ran once:
// a tick fired by each replica would run its agent several times.
func (c jobsCheck) checkTicks(from, to time.Time) {
	c.t.Helper()
	ticks := map[string]time.Time{}
	for tick := from.Add(-time.Minute); tick.Before(to.Add(time.Minute)); tick = tick.Add(time.Second) {
		ticks[engine.ScheduleRunID("tick", tick)] = tick
	}
	for tick := from; tick.Before(to); tick = tick.Add(time.Second) {
		id := engine.ScheduleRunID("tick", tick)
		waitFor(c.t, 20*time.Second, "the run of tick "+tick.Format(time.TimeOnly), func() bool {
			return c.count("SELECT count(*) FROM bread_runs WHERE id = ? AND status = 'completed'", id) == 1
		})
	}
	rows, err := c.db.Query("SELECT id FROM bread_runs WHERE agent_id = 'ticker' AND status = 'completed'")
	if err != nil {
		c.t.Fatal(err)
	}
	var ids []string
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	for _, id := range ids {
		tick, ok := ticks[id]
		if !ok {
			c.t.Fatalf("ticker run %s is no tick's run", id)
		}
		if n := c.starts(id); n != 1 {
			c.t.Fatalf("the tick of %s ran %d times", tick.Format(time.TimeOnly), n)
		}
	}
	c.t.Logf("%d ticker runs, one per tick, over %s", len(ids), to.Sub(from))
}

// nextSecond is the first whole second at least d from now.
func nextSecond(d time.Duration) time.Time {
	return time.Now().Add(d).Truncate(time.Second).Add(time.Second)
}

// firing waits until the schedule fires (River elects the replica that
// fires schedules a few seconds after the queues start; ticks before that
// are not fired late) and returns the next whole second.
func (c jobsCheck) firing() time.Time {
	c.t.Helper()
	waitFor(c.t, time.Minute, "the first tick", func() bool {
		return c.count("SELECT count(*) FROM bread_runs WHERE agent_id = 'ticker' AND status = 'completed'") > 0
	})
	return nextSecond(0)
}

// TestBackgroundRunsOnThreeReplicas is issue 22's acceptance on
// PostgreSQL: three `bread start` processes share one database and its
// River queue. A schedule every second fires once per tick in total, not
// once per replica; 1,000 background runs each execute exactly once,
// spread over the replicas; then slow runs are started, the replica
// holding the most of them is killed with SIGKILL, and each of its runs
// ends per its agent's onLost policy (retried once to completion, or
// RUN_LOST) while every other run completes once.
func TestBackgroundRunsOnThreeReplicas(t *testing.T) {
	pg, _ := services(t)
	dbURL := freshSchema(t, pg)
	dir := jobsProject(t, `store: {type: postgres, url: "${DB_URL}"}`)
	env := []string{"DB_URL=" + dbURL}
	replicas := []*replicaProc{startReplica(t, dir, env), startReplica(t, dir, env), startReplica(t, dir, env)}
	bases := []string{replicas[0].base, replicas[1].base, replicas[2].base}
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := jobsCheck{t: t, db: db, pg: true}

	t.Run("a schedule every second fires once per tick across three replicas", func(t *testing.T) {
		c.t = t
		from := c.firing()
		to := from.Add(10 * time.Second)
		time.Sleep(time.Until(to.Add(time.Second)))
		c.checkTicks(from, to)
	})

	t.Run("1,000 background runs execute exactly once, spread over the replicas", func(t *testing.T) {
		c.t = t
		ids := startBackground(t, bases, "fast", 1000)
		waitFor(t, 3*time.Minute, "1,000 runs completed", func() bool {
			return c.count("SELECT count(*) FROM bread_runs WHERE agent_id = 'fast' AND status = 'completed'") == 1000
		})
		c.checkRanOnce(ids)
		if n := c.count("SELECT count(*) FROM bread_crumbs WHERE agent_id = 'fast' AND type = ?", core.TypeAgentRunStart); n != 1000 {
			t.Fatalf("%d agent:run:start crumbs for 1,000 runs", n)
		}
		per := c.workedBy("fast")
		t.Logf("runs per replica: %v", per)
		if len(per) != 3 {
			t.Fatalf("the runs were worked by %d replicas, want 3: %v", len(per), per)
		}
		for client, n := range per {
			if n < 20 {
				t.Errorf("replica %s worked only %d of 1,000 runs", client, n)
			}
		}
	})

	t.Run("a replica killed mid-run: its runs end per onLost", func(t *testing.T) {
		c.t = t
		clients := c.clientsInStartOrder()
		// Interleaved, so that each replica's fetch takes runs of both.
		var retried, failed []string
		for range 6 {
			retried = append(retried, startBackground(t, bases, "retrier", 1)...)
			failed = append(failed, startBackground(t, bases, "failer", 1)...)
		}
		all := append(slices.Clone(retried), failed...)
		waitFor(t, 30*time.Second, "the slow runs running", func() bool {
			return c.count("SELECT count(*) FROM bread_runs WHERE agent_id IN ('retrier', 'failer') AND status = 'running'") == len(all)
		})
		// The victim holds runs of both policies, the most of such.
		holders := c.runningHolders(all)
		victim, most := "", 0
		for client, runs := range holders {
			both := slices.ContainsFunc(runs, func(id string) bool { return slices.Contains(retried, id) }) &&
				slices.ContainsFunc(runs, func(id string) bool { return slices.Contains(failed, id) })
			if both && len(runs) > most {
				victim, most = client, len(runs)
			}
		}
		if victim == "" {
			t.Fatalf("no replica holds slow runs of both policies: %v", holders)
		}
		i := slices.Index(clients, victim)
		if i < 0 {
			t.Fatalf("client %s is not one of the replicas' %v", victim, clients)
		}
		if err := replicas[i].cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		lost := map[string]bool{}
		for _, id := range holders[victim] {
			lost[id] = true
		}
		t.Logf("killed replica %d holding %d of the %d slow runs", i, len(lost), len(all))
		waitFor(t, 3*time.Minute, "every slow run ended", func() bool {
			return c.count("SELECT count(*) FROM bread_runs WHERE agent_id IN ('retrier', 'failer') AND status IN ('completed', 'lost', 'failed', 'cancelled')") == len(all)
		})
		c.checkOnLost(retried, failed, lost)
	})
}

// checkOnLost holds each slow run to its fate: a run the killed replica
// held ends per its agent's onLost (retrier: completed on attempt 2 with
// two agent:run:start; failer: lost with one RUN_LOST), the others
// complete once.
func (c jobsCheck) checkOnLost(retried, failed []string, lost map[string]bool) {
	c.t.Helper()
	for _, id := range retried {
		status, attempt, _ := c.record(id)
		n := c.starts(id)
		switch {
		case lost[id] && (status != "completed" || attempt != 2 || n != 2):
			c.t.Errorf("retried run %s of the killed replica: %s, attempt %d, %d starts; want completed on attempt 2", id, status, attempt, n)
		case !lost[id] && (status != "completed" || attempt != 1 || n != 1):
			c.t.Errorf("retried run %s of a live replica: %s, attempt %d, %d starts; want completed once", id, status, attempt, n)
		}
	}
	for _, id := range failed {
		status, attempt, code := c.record(id)
		n := c.starts(id)
		errs := c.count("SELECT count(*) FROM bread_crumbs WHERE run_id = ? AND type = ?", id, core.TypeAgentError)
		switch {
		case lost[id] && (status != "lost" || code != core.CodeRunLost || n != 1 || errs != 1):
			c.t.Errorf("failing run %s of the killed replica: %s %s, %d starts, %d agent:error; want lost with one RUN_LOST", id, status, code, n, errs)
		case !lost[id] && (status != "completed" || attempt != 1 || n != 1):
			c.t.Errorf("failing run %s of a live replica: %s, attempt %d, %d starts; want completed once", id, status, attempt, n)
		}
	}
}

// workedBy counts the runs of agent by the River client (replica) that
// worked them.
func (c jobsCheck) workedBy(agent string) map[string]int {
	c.t.Helper()
	rows, err := c.db.Query(`SELECT j.attempted_by[array_length(j.attempted_by, 1)], count(*)
		FROM river_job j JOIN bread_runs r ON r.id = j.args->>'key'
		WHERE j.args->>'kind' = 'bread.run' AND r.agent_id = $1 GROUP BY 1`, agent)
	if err != nil {
		c.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var client string
		var n int
		if err := rows.Scan(&client, &n); err != nil {
			c.t.Fatal(err)
		}
		out[client] = n
	}
	return out
}

// clientsInStartOrder lists the replicas' River client ids in the order the
// replicas started (a River client id ends with its start time, and the
// replicas start one after the other).
func (c jobsCheck) clientsInStartOrder() []string {
	c.t.Helper()
	rows, err := c.db.Query(`SELECT DISTINCT unnest(attempted_by) FROM river_job`)
	if err != nil {
		c.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return clientStart(out[i]) < clientStart(out[j]) })
	if len(out) != 3 {
		c.t.Fatalf("River clients %v, want the three replicas'", out)
	}
	return out
}

// clientStart is the start-time suffix of a default River client id
// (<host>_2006_01_02T15_04_05_000000).
func clientStart(id string) string {
	if len(id) < 26 {
		return id
	}
	return id[len(id)-26:]
}

// runningHolders maps each River client to the runs of ids it is running.
func (c jobsCheck) runningHolders(ids []string) map[string][]string {
	c.t.Helper()
	out := map[string][]string{}
	for _, id := range ids {
		var client string
		if err := c.db.QueryRow(`SELECT attempted_by[array_length(attempted_by, 1)] FROM river_job WHERE args->>'key' = $1 AND state = 'running'`, id).Scan(&client); err != nil {
			c.t.Fatalf("the job of run %s: %v", id, err)
		}
		out[client] = append(out[client], id)
	}
	return out
}

// TestBackgroundRunsOnSQLite is the same acceptance on SQLite in one
// process: the schedule fires once per tick, 1,000 background runs execute
// once each, and after the process is killed with SIGKILL and started
// again, the runs it held end per their onLost policy.
func TestBackgroundRunsOnSQLite(t *testing.T) {
	dir := jobsProject(t, `store: {type: sqlite, path: ./bread.db}`)
	replica := startReplica(t, dir, nil)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "bread.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := jobsCheck{t: t, db: db}

	from := c.firing()
	ids := startBackground(t, []string{replica.base}, "fast", 1000)
	waitFor(t, 3*time.Minute, "1,000 runs completed", func() bool {
		return c.count("SELECT count(*) FROM bread_runs WHERE agent_id = 'fast' AND status = 'completed'") == 1000
	})
	c.checkRanOnce(ids)
	to := from.Add(10 * time.Second)
	time.Sleep(time.Until(to.Add(time.Second)))
	c.checkTicks(from, to)

	retried := startBackground(t, []string{replica.base}, "retrier", 3)
	failed := startBackground(t, []string{replica.base}, "failer", 3)
	all := append(slices.Clone(retried), failed...)
	waitFor(t, 30*time.Second, "the slow runs running", func() bool {
		return c.count("SELECT count(*) FROM bread_runs WHERE agent_id IN ('retrier', 'failer') AND status = 'running'") == len(all)
	})
	if err := replica.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = replica.cmd.Wait()
	lost := map[string]bool{}
	for _, id := range all {
		lost[id] = true
	}
	startReplica(t, dir, nil)
	waitFor(t, 3*time.Minute, "every slow run ended", func() bool {
		return c.count("SELECT count(*) FROM bread_runs WHERE agent_id IN ('retrier', 'failer') AND status IN ('completed', 'lost', 'failed', 'cancelled')") == len(all)
	})
	c.checkOnLost(retried, failed, lost)
}
