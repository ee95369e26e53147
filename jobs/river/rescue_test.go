package riverjobs_test

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/jobs/river"
)

// rescueLost leaves two jobs as a replica killed mid-job leaves them, in
// state running with an attempt begun an hour ago, then starts a queue
// whose RescueAfter has passed since: the job with attempts left is handed
// out again, its lost attempt counted (Attempt 2, as core.Job.Attempt
// says); the one that was on its last attempt is discarded, never run.
func rescueLost(t *testing.T, db *sql.DB, o riverjobs.Options, markLost string) {
	t.Helper()
	o.RescueAfter = time.Minute
	q, err := riverjobs.Open(t.Context(), o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = q.Close() })
	for _, j := range []core.Job{{Kind: "test", Key: "lost", MaxAttempts: 3}, {Kind: "test", Key: "lost-last", MaxAttempts: 1}} {
		if err := q.Enqueue(t.Context(), j); err != nil {
			t.Fatalf("Enqueue: %v", err)
		}
	}
	res, err := db.ExecContext(t.Context(), markLost)
	if err != nil {
		t.Fatalf("leave the jobs running: %v", err)
	}
	if n, _ := res.RowsAffected(); n != 2 {
		t.Fatalf("left %d jobs running, want 2", n)
	}
	var mu sync.Mutex
	var got []core.Job
	w := workerFunc(func(_ context.Context, j core.Job) error {
		mu.Lock()
		got = append(got, j)
		mu.Unlock()
		return nil
	})
	if err := q.Start(t.Context(), w, nil); err != nil {
		t.Fatalf("Start: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := q.Stop(ctx); err != nil {
		t.Errorf("Stop: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].Key != "lost" || got[0].Attempt != 2 {
		t.Fatalf("after the rescue, worked %+v; want only \"lost\", as attempt 2", got)
	}
}

type workerFunc func(context.Context, core.Job) error

func (f workerFunc) WorkJob(ctx context.Context, j core.Job) error { return f(ctx, j) }

func TestRescueLostJobPostgres(t *testing.T) {
	url := serverURL(t)
	admin := adminDB(t, url)
	schema := freshSchema(t, admin)
	rescueLost(t, admin, fastOptions(riverjobs.Options{Dialect: riverjobs.Postgres, DSN: url, Schema: schema}),
		"UPDATE "+schema+".river_job SET state = 'running', attempt = attempt + 1, attempted_at = now() - interval '1 hour', attempted_by = ARRAY['a-dead-replica']")
}

func TestRescueLostJobSQLite(t *testing.T) {
	db := sqliteDB(t, tempPath(t))
	rescueLost(t, db, fastOptions(riverjobs.Options{Dialect: riverjobs.SQLite, DB: db}),
		"UPDATE river_job SET state = 'running', attempt = attempt + 1, attempted_at = datetime('now', '-1 hour', 'subsec'), attempted_by = json('[\"a-dead-replica\"]')")
}

// liveJobNotRescued runs a job past RescueAfter (and past River's own job
// timeout) while a queue that becomes leader rescues stuck jobs: the
// heartbeat keeps the job from being taken for lost, so it runs once, and
// its context is never cut. The leader is known by the schedule ticks only
// a leader fires.
func liveJobNotRescued(t *testing.T, first, second riverjobs.Options) {
	t.Helper()
	first.RescueAfter, second.RescueAfter = 2*time.Second, 2*time.Second
	first.Queue = "elsewhere" // leads first, runs none of the test's jobs
	q1, err := riverjobs.Open(t.Context(), first)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = q1.Close() })
	q2, err := riverjobs.Open(t.Context(), second)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = q2.Close() })
	if err := q1.Start(t.Context(), workerFunc(func(context.Context, core.Job) error { return nil }), nil); err != nil {
		t.Fatalf("Start: %v", err)
	}
	time.Sleep(time.Second) // q1 is elected

	var mu sync.Mutex
	var runs []core.Job
	var firstTick time.Time
	var cut error
	release := make(chan struct{})
	w := workerFunc(func(ctx context.Context, j core.Job) error {
		if j.Kind == core.JobKindTick {
			mu.Lock()
			if firstTick.IsZero() {
				firstTick = time.Now()
			}
			mu.Unlock()
			return nil
		}
		mu.Lock()
		runs = append(runs, j)
		mu.Unlock()
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			mu.Lock()
			cut = ctx.Err()
			mu.Unlock()
			return ctx.Err()
		}
	})
	sched := core.JobSchedule{Name: "leader-probe", Schedule: core.Every(time.Second)}
	if err := q2.Start(t.Context(), w, []core.JobSchedule{sched}); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := q2.Enqueue(t.Context(), core.Job{Kind: "test", Key: "long"}); err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	time.Sleep(3 * time.Second) // past RescueAfter and River's job timeout
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := q1.Stop(ctx); err != nil { // q1 resigns; q2 is elected
		t.Fatalf("Stop: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		ft := firstTick
		mu.Unlock()
		if !ft.IsZero() && time.Since(ft) > 3*time.Second {
			break // q2 leads, and its rescuer has had time to run
		}
		if time.Now().After(deadline) {
			t.Fatal("the second queue fired no schedule tick in 20s: it never became leader")
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(release)
	time.Sleep(2 * time.Second)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	if err := q2.Stop(ctx2); err != nil {
		t.Errorf("Stop: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(runs) != 1 {
		t.Errorf("the live job was handed out %d times, want once: %+v", len(runs), runs)
	}
	if cut != nil {
		t.Errorf("the job's context was cut: %v", cut)
	}
}

func TestLiveJobNotRescuedPostgres(t *testing.T) {
	url := serverURL(t)
	schema := freshSchema(t, adminDB(t, url))
	o := fastOptions(riverjobs.Options{Dialect: riverjobs.Postgres, DSN: url, Schema: schema})
	liveJobNotRescued(t, o, o)
}

func TestLiveJobNotRescuedSQLite(t *testing.T) {
	db := sqliteDB(t, tempPath(t))
	o := fastOptions(riverjobs.Options{Dialect: riverjobs.SQLite, DB: db})
	liveJobNotRescued(t, o, o)
}
