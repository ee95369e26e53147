package cli_test

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/cli"
	"github.com/breadai/bread/core"
)

// bread invoke --background queues a run on the project's durable queue and
// exits; with no replica working the queue it stays queued, and bread runs
// cancel ends it there. Without a durable queue, --background refuses.
func TestInvokeBackgroundQueuesAndRunsCancelEndsIt(t *testing.T) {
	// The store's own options stay the store's: the queue reads the same
	// file from them.
	dir := project(t, basic(map[string]string{
		"bread.yaml": "entrypoints: [echo]\nstore: {type: sqlite, path: ./bread.db, busyTimeout: 2s}\nworkers: {concurrency: 2}\n",
	}))
	r := run(t, cli.Options{}, "invoke", "echo", "hi", "--background", "--json", "--cwd", dir)
	var d core.Detached
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &d) != nil || d.RunID == "" || d.SessionID == "" {
		t.Fatalf("invoke --background: %+v", r)
	}
	if r := run(t, cli.Options{}, "runs", "list", "--status", "queued", "--json", "--cwd", dir); r.code != 0 || !strings.Contains(r.stdout, d.RunID) {
		t.Fatalf("runs list --status queued: %+v", r)
	}
	r = run(t, cli.Options{}, "runs", "cancel", d.RunID, "--json", "--cwd", dir)
	var rec core.RunRecord
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rec) != nil || rec.Status != core.RunCancelled || rec.ErrorCode != core.CodeRunCancelled {
		t.Fatalf("runs cancel of a queued run: %+v", r)
	}
	if r := run(t, cli.Options{}, "runs", "cancel", d.RunID, "--cwd", dir); r.code == 0 || !strings.Contains(r.stderr, core.CodeNotFound) {
		t.Fatalf("a second cancel: %+v", r)
	}

	plain := project(t, basic(nil))
	if r := run(t, cli.Options{}, "invoke", "echo", "hi", "--background", "--cwd", plain); r.code == 0 || !strings.Contains(r.stderr, "workers:") {
		t.Fatalf("invoke --background without workers: %+v", r)
	}
	if r := run(t, cli.Options{}, "invoke", "echo", "hi", "--webhook", "https://example.com/x", "--cwd", plain); r.code != cli.ExitUsage {
		t.Fatalf("--webhook without --background: %+v", r)
	}
}

// bread schedules lists bread.yaml's schedules with their next tick, and
// bread build fails a schedule the engine would refuse.
func TestSchedulesCommand(t *testing.T) {
	dir := project(t, basic(map[string]string{
		"bread.yaml": "entrypoints: [echo]\nstore: {type: sqlite, path: ./bread.db}\nschedules:\n" +
			"  - {name: nightly, cron: \"0 3 * * *\", timeZone: Europe/Rome, agent: echo, input: hi}\n" +
			"  - {name: often, every: 90s, agent: echo, session: log}\n",
	}))
	r := run(t, cli.Options{}, "schedules", "--json", "--cwd", dir)
	var list []core.ScheduleInfo
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil || len(list) != 2 {
		t.Fatalf("schedules --json: %+v", r)
	}
	if list[0].Name != "nightly" || list[0].Spec != "0 3 * * *" || list[1].Spec != "@every 1m30s" || list[1].Session != "log" || list[0].Next.IsZero() {
		t.Fatalf("schedules: %+v", list)
	}
	if r := run(t, cli.Options{}, "schedules", "--cwd", dir); r.code != 0 || !strings.Contains(r.stdout, "Europe/Rome") || !strings.Contains(r.stdout, "(new)") {
		t.Fatalf("schedules table: %+v", r)
	}
	if r := run(t, cli.Options{}, "build", "--cwd", dir); r.code != 0 {
		t.Fatalf("build of a project with schedules: %+v", r)
	}
	bad := project(t, basic(map[string]string{
		"bread.yaml": "entrypoints: [echo]\nstore: {type: sqlite, path: ./bread.db}\nschedules:\n  - {name: x, cron: \"61 * * * *\", agent: echo}\n",
	}))
	if r := run(t, cli.Options{}, "build", "--cwd", bad); r.code == 0 || !strings.Contains(r.stderr, core.CodeInvalidConfig) {
		t.Fatalf("build with a bad cron: %+v", r)
	}
	if r := run(t, cli.Options{}, "schedules", "--cwd", bad); r.code == 0 || !strings.Contains(r.stderr, "61") {
		t.Fatalf("schedules with a bad cron: %+v", r)
	}
	twice := project(t, basic(map[string]string{
		"bread.yaml": "entrypoints: [echo]\nstore: {type: sqlite, path: ./bread.db}\nschedules:\n  - {name: x, every: 1m, agent: echo}\n  - {name: x, every: 2m, agent: echo}\n",
	}))
	if r := run(t, cli.Options{}, "build", "--cwd", twice); r.code == 0 || !strings.Contains(r.stderr, "twice") {
		t.Fatalf("build with a schedule defined twice: %+v", r)
	}
	unknown := project(t, basic(map[string]string{
		"bread.yaml": "entrypoints: [echo]\nstore: {type: sqlite, path: ./bread.db}\nschedules:\n  - {name: x, every: 1m, agent: nobody}\n",
	}))
	if r := run(t, cli.Options{}, "build", "--cwd", unknown); r.code == 0 || !strings.Contains(r.stderr, "nobody") {
		t.Fatalf("build with a schedule of an unknown agent: %+v", r)
	}
}

// Which queue serves the background runs follows bread.yaml: workers on a
// memory store is the in-process queue (a background run is queued, then
// completes); schedules on a SQL store use River without a workers section
// (its tables are in the project's database).
func TestJobQueueWiring(t *testing.T) {
	mem := serve(t, project(t, basic(map[string]string{
		"bread.yaml": "entrypoints: [echo]\nstore: memory\nworkers: {concurrency: 1}\n",
	})))
	res, body := mem.post(t, "/agents/echo/run", `{"input":"hi","background":true}`, "")
	var d core.Detached
	if res.StatusCode != 202 || json.Unmarshal([]byte(body), &d) != nil {
		t.Fatalf("POST = %d %s", res.StatusCode, body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := http.Get(mem.base + "/runs/" + d.RunID)
		if err != nil {
			t.Fatal(err)
		}
		var rec core.RunRecord
		_ = json.NewDecoder(r.Body).Decode(&rec)
		r.Body.Close()
		if rec.Status == core.RunCompleted && rec.Attempt == 1 {
			break // attempt 1: a job worker ran it
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background run on the memory store's queue: %+v", rec)
		}
		time.Sleep(20 * time.Millisecond)
	}

	dir := project(t, basic(map[string]string{
		"bread.yaml": "entrypoints: [echo]\nstore: {type: sqlite, path: ./bread.db}\nschedules:\n  - {name: x, every: 1h, agent: echo}\n",
	}))
	serve(t, dir)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "bread.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'river_job'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("river_job in the project's database: %d (%v)", n, err)
	}
}
