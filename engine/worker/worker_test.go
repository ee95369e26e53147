package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/engine/worker"
)

// runner records what the worker asked of the engine.
type runner struct {
	retries bool // RetriesLost's answer
	calls   []string
}

func (r *runner) Exec(_ context.Context, p worker.RunJob, attempt int) error {
	r.calls = append(r.calls, fmt.Sprintf("exec %s %d %v", p.RunID, attempt, p.DecodeInput()))
	return nil
}

func (r *runner) Retry(_ context.Context, p worker.RunJob, rec core.RunRecord) error {
	r.calls = append(r.calls, fmt.Sprintf("retry %s after %d", p.RunID, rec.Attempt))
	return nil
}

func (r *runner) RetriesLost(context.Context, core.RunRecord) bool { return r.retries }

func (r *runner) EndLost(_ context.Context, rec core.RunRecord) {
	r.calls = append(r.calls, "endLost "+rec.ID+" "+string(rec.Status))
}

func (r *runner) Notify(p worker.RunJob, sessionID string) {
	r.calls = append(r.calls, "notify "+p.RunID+" "+sessionID)
}

type ticks struct{ keys []string }

func (t *ticks) Work(_ context.Context, j core.Job) error {
	t.keys = append(t.keys, j.Key)
	return nil
}

// recordless is a store without run records: its BreadStore methods only.
type recordless struct{ core.BreadStore }

// unreachable is a store whose database cannot be reached.
type unreachable struct{ *memory.Store }

func (unreachable) GetRun(context.Context, string) (core.RunRecord, error) {
	return core.RunRecord{}, &core.BreadError{Code: core.CodeStoreUnavailable, Message: "the connection was terminated"}
}

// sweptFirst is a store on which another replica's sweeper declares the
// lapsed run lost at the moment this worker tries to (its LoseRun comes
// second and loses) and leaves it queued for its job to retry, as the
// engine's sweeper does with a run whose onLost policy retries it.
type sweptFirst struct{ *memory.Store }

func (s sweptFirst) LoseRun(ctx context.Context, id string, now int64) (bool, error) {
	if won, err := s.Store.LoseRun(ctx, id, now); err != nil || !won {
		return false, err
	}
	rec, err := s.GetRun(ctx, id)
	if err != nil {
		return false, err
	}
	rec.Status, rec.Owner, rec.LeaseUntil, rec.ErrorCode = core.RunQueued, "", 0, ""
	return false, s.PutRun(ctx, rec)
}

func runJob(t *testing.T, runID string) core.Job {
	payload, err := json.Marshal(worker.RunJob{RunID: runID, AgentID: "writer", Input: json.RawMessage(`"hi"`)})
	if err != nil {
		t.Fatal(err)
	}
	return core.Job{Kind: core.JobKindRun, Key: runID, Payload: payload}
}

// queuedAt is the job of run-1, enqueued at at into session (none: a
// pipeline's).
func queuedAt(at time.Time, session string) func(*testing.T) core.Job {
	return func(t *testing.T) core.Job {
		p := worker.RunJob{RunID: "run-1", AgentID: "writer", Input: json.RawMessage(`"hi"`), QueuedAt: at.UnixMilli()}
		p.Options.Session.ID = session
		payload, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return core.Job{Kind: core.JobKindRun, Key: "run-1", Payload: payload}
	}
}

// The record of a run job's run decides what the job means; each row is a
// record as a worker finds it and what the worker asks of the engine.
func TestARunJobIsDecidedByItsRecord(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	lease := 15 * time.Second
	running := func(leaseUntil time.Time, attempt int) *core.RunRecord {
		return &core.RunRecord{ID: "run-1", AgentID: "writer", SessionID: "s", Status: core.RunRunning, Owner: "other", LeaseUntil: leaseUntil.UnixMilli(), Attempt: attempt}
	}
	cases := []struct {
		name        string
		rec         *core.RunRecord // nil: no record
		noRecords   bool            // a store that keeps no run records
		unreachable bool            // the store's reads fail with STORE_UNAVAILABLE
		sweptFirst  bool            // a sweeper wins LoseRun and leaves the run queued (sweptFirst)
		retries     bool
		job         func(*testing.T) core.Job
		calls       []string
		snooze      time.Duration // a JobSnooze of this length, else nil
	}{
		{name: "queued: attempt 1 starts", rec: &core.RunRecord{ID: "run-1", AgentID: "writer", Status: core.RunQueued}, calls: []string{"exec run-1 1 hi"}},
		{name: "queued with an attempt: the sweeper left a lost one to retry", rec: &core.RunRecord{ID: "run-1", AgentID: "writer", Status: core.RunQueued, Attempt: 1}, calls: []string{"retry run-1 after 1"}},
		{name: "running under a live lease: snoozed until it could lapse", rec: running(now.Add(time.Minute), 1), snooze: time.Minute + lease/3},
		{name: "running under a lapsed lease, retried", rec: running(now.Add(-time.Second), 1), retries: true, calls: []string{"retry run-1 after 1"}},
		{name: "running under a lapsed lease, ended: this worker writes RUN_LOST", rec: running(now.Add(-time.Second), 1), calls: []string{"endLost run-1 lost", "notify run-1 s"}},
		// Found under -race and load (TestLostBackgroundRunIsRetriedFromBeforeItsAttempt):
		// the job read the record queued after the sweeper's LoseRun and
		// ended with nothing done, so the run stayed queued for good.
		{name: "running under a lapsed lease a sweeper declared lost first and left queued: this job retries it", rec: running(now.Add(-time.Second), 1), sweptFirst: true, calls: []string{"retry run-1 after 1"}},
		{name: "lost already: its end is written, the webhook told", rec: &core.RunRecord{ID: "run-1", AgentID: "writer", SessionID: "s", Status: core.RunLost, Attempt: 1}, calls: []string{"notify run-1 s"}},
		{name: "lost, retried", rec: &core.RunRecord{ID: "run-1", AgentID: "writer", SessionID: "s", Status: core.RunLost, Attempt: 1}, retries: true, calls: []string{"retry run-1 after 1"}},
		{name: "completed: nothing left", rec: &core.RunRecord{ID: "run-1", AgentID: "writer", Status: core.RunCompleted}},
		{name: "suspended: nothing left", rec: &core.RunRecord{ID: "run-1", AgentID: "writer", Status: core.RunSuspended, CheckpointID: "cp"}},
		{name: "no record (its session was deleted)"},
		// Found by the chaos harness (issue 31): the job is enqueued before
		// its record is written; one whose enqueuer died between the two
		// starts the run itself once a lease has passed.
		{name: "no record yet, the job just queued: snoozed briefly, its record is a write behind", job: queuedAt(now.Add(-time.Millisecond), "s"), snooze: 50 * time.Millisecond},
		{name: "no record yet, the job a second old: snoozed as long again", job: queuedAt(now.Add(-time.Second), "s"), snooze: time.Second},
		{name: "no record yet, the job nearly a lease old: snoozed until the lease is over", job: queuedAt(now.Add(-lease+time.Second), "s"), snooze: time.Second},
		{name: "no record, the job older than a lease: its enqueuer died, attempt 1 starts", job: queuedAt(now.Add(-lease), "s"), calls: []string{"exec run-1 1 hi"}},
		{name: "no record, the job older than a lease, its session gone: dropped", job: queuedAt(now.Add(-lease), "gone")},
		{name: "no record, a pipeline's job older than a lease: it starts", job: queuedAt(now.Add(-time.Minute), ""), calls: []string{"exec run-1 1 hi"}},
		{name: "a store without run records: it runs", noRecords: true, calls: []string{"exec run-1 1 hi"}},
		// Found by the chaos harness: an error here counted an attempt and
		// the queue's backoff (River's grows to minutes) left the run
		// queued long after the database was back.
		{name: "the store cannot be reached: snoozed a second, no attempt counted", rec: &core.RunRecord{ID: "run-1", AgentID: "writer", Status: core.RunQueued}, unreachable: true, snooze: time.Second},
		{name: "a payload that does not decode is dropped", rec: &core.RunRecord{ID: "run-1", Status: core.RunQueued},
			job: func(*testing.T) core.Job { return core.Job{Kind: core.JobKindRun, Key: "run-1", Payload: []byte("{")} }},
		{name: "a job of an unknown kind is dropped", rec: &core.RunRecord{ID: "run-1", Status: core.RunQueued},
			job: func(*testing.T) core.Job { return core.Job{Kind: "mystery", Key: "run-1"} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.New()
			var store core.BreadStore = mem
			if c.noRecords {
				store = recordless{mem}
			}
			if c.unreachable {
				store = unreachable{mem}
			}
			if c.sweptFirst {
				store = sweptFirst{mem}
			}
			if _, err := mem.CreateSession(t.Context(), core.NewSession{ID: "s"}); err != nil {
				t.Fatal(err)
			}
			if c.rec != nil {
				if err := mem.PutRun(t.Context(), *c.rec); err != nil {
					t.Fatal(err)
				}
			}
			r := &runner{retries: c.retries}
			w := worker.New(worker.Config{Store: core.NewStorage(store), Runs: r, Lease: lease, Now: func() time.Time { return now }})
			job := runJob(t, "run-1")
			if c.job != nil {
				job = c.job(t)
			}
			err := w.WorkJob(t.Context(), job)
			var snooze *core.JobSnooze
			switch {
			case c.snooze > 0 && (!errors.As(err, &snooze) || snooze.After != c.snooze):
				t.Fatalf("WorkJob = %v, want a snooze of %v", err, c.snooze)
			case c.snooze == 0 && err != nil:
				t.Fatalf("WorkJob = %v", err)
			}
			if got, want := strings.Join(r.calls, "; "), strings.Join(c.calls, "; "); got != want {
				t.Fatalf("the engine was asked %q, want %q", got, want)
			}
		})
	}
}

func TestATickGoesToTheTimetable(t *testing.T) {
	tt := &ticks{}
	w := worker.New(worker.Config{Store: core.NewStorage(memory.New()), Runs: &runner{}, Ticks: tt})
	key := core.ScheduleTickKey("nightly", time.Unix(1_800_000_000, 0))
	if err := w.WorkJob(t.Context(), core.Job{Kind: core.JobKindTick, Key: key}); err != nil {
		t.Fatal(err)
	}
	if len(tt.keys) != 1 || tt.keys[0] != key {
		t.Fatalf("ticks worked: %v", tt.keys)
	}
	// Without a timetable a tick is dropped, not an error the queue retries.
	if err := worker.New(worker.Config{Store: core.NewStorage(memory.New()), Runs: &runner{}}).WorkJob(t.Context(), core.Job{Kind: core.JobKindTick, Key: key}); err != nil {
		t.Fatal(err)
	}
}
