package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// withQueue gives the testbed's Instance an in-process job queue of
// concurrency workers, so background runs go through jobs.
func withQueue(concurrency int) func(*engine.Config) {
	return func(c *engine.Config) {
		c.Jobs = memory.NewQueue(memory.QueueOptions{Concurrency: concurrency})
	}
}

// waitRecord waits, inside a synctest bubble, until a run's record is one
// ok accepts (see settle).
func waitRecord(t *testing.T, rs core.RunStore, runID string, ok func(core.RunRecord) bool) core.RunRecord {
	t.Helper()
	var rec core.RunRecord
	var err error
	settle(t, "run "+runID+" reaches the expected state", func() bool {
		rec, err = rs.GetRun(t.Context(), runID)
		return err == nil && ok(rec)
	})
	return rec
}

func status(s core.RunStatus) func(core.RunRecord) bool {
	return func(r core.RunRecord) bool { return r.Status == s }
}

func loggedTypes(t *testing.T, store *memory.Store, runID string) []string {
	t.Helper()
	entries, err := store.GetCrumbs(t.Context(), runID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Type)
	}
	return out
}

func count(types []string, typ string) int {
	n := 0
	for _, x := range types {
		if x == typ {
			n++
		}
	}
	return n
}

func TestQueuedBackgroundRunRunsOnceAsItsCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbed(t, modeltest.New(modeltest.Text("done")), []*core.Agent{textAgent("writer")}, withQueue(2))
		ctx := core.WithIdentity(t.Context(), &core.AuthIdentity{Subject: "ana"})
		d, err := tb.in.RunBackground(ctx, "writer", "hi", core.RunOptions{}, core.BackgroundOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d.RunID == "" || d.SessionID == "" {
			t.Fatalf("detached = %+v, want a run id and the session it will use", d)
		}
		rec := waitRecord(t, tb.store, d.RunID, status(core.RunCompleted))
		if rec.Attempt != 1 || rec.SessionID != d.SessionID || rec.StartedBy != core.OwnerKey(&core.AuthIdentity{Subject: "ana"}) {
			t.Fatalf("record = %+v, want attempt 1 in session %s started by ana", rec, d.SessionID)
		}
		types := loggedTypes(t, tb.store, d.RunID)
		if count(types, core.TypeAgentRunStart) != 1 || types[len(types)-1] != core.TypeAgentRunEnd {
			t.Fatalf("crumb log = %v, want one run ending with agent:run:end", types)
		}
		if tb.model.Calls() != 1 {
			t.Fatalf("model called %d times, want 1", tb.model.Calls())
		}
	})
}

func TestQueuedBackgroundRunRefusedBeforeItIsQueued(t *testing.T) {
	tb := newTestbed(t, modeltest.New(modeltest.Text("done")), []*core.Agent{textAgent("writer")}, withQueue(1))
	cases := []struct {
		name, agent, webhook, code string
	}{
		{"unknown agent", "nobody", "", core.CodeAgentNotFound},
		{"webhook without a secret", "writer", "https://example.com/hook", core.CodeValidationError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := tb.in.RunBackground(t.Context(), c.agent, "hi", core.RunOptions{}, core.BackgroundOptions{Webhook: c.webhook})
			wantCode(t, err, c.code)
		})
	}
	runs, err := tb.store.ListRuns(t.Context(), core.RunFilter{})
	if err != nil || len(runs) != 0 {
		t.Fatalf("runs = %+v (%v), want none recorded for refused runs", runs, err)
	}
}

func TestCancelQueuedRunNeverStartsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reached := make(chan struct{})
		model := modeltest.New(modeltest.Block(reached, "working"), modeltest.Text("second"))
		tb := newTestbed(t, model, []*core.Agent{textAgent("writer")}, withQueue(1))
		first, err := tb.in.RunBackground(t.Context(), "writer", "one", core.RunOptions{}, core.BackgroundOptions{})
		if err != nil {
			t.Fatal(err)
		}
		<-reached // the only worker is busy with the first run
		second, err := tb.in.RunBackground(t.Context(), "writer", "two", core.RunOptions{}, core.BackgroundOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rec, _ := tb.store.GetRun(t.Context(), second.RunID); rec.Status != core.RunQueued {
			t.Fatalf("second run = %+v, want queued", rec)
		}
		if ok, err := tb.in.CancelQueued(t.Context(), first.RunID); ok || err != nil {
			t.Fatalf("CancelQueued(running run) = %v, %v; want false: Cancel stops a running run", ok, err)
		}
		ok, err := tb.in.CancelQueued(t.Context(), second.RunID)
		if !ok || err != nil {
			t.Fatalf("CancelQueued(queued run) = %v, %v", ok, err)
		}
		if ok, _ := tb.in.CancelQueued(t.Context(), second.RunID); ok {
			t.Fatal("a second CancelQueued of the same run succeeded")
		}
		rec := waitRecord(t, tb.store, second.RunID, status(core.RunCancelled))
		if rec.ErrorCode != core.CodeRunCancelled {
			t.Fatalf("record = %+v, want RUN_CANCELLED", rec)
		}
		if got := loggedTypes(t, tb.store, second.RunID); len(got) != 1 || got[0] != core.TypeAgentError {
			t.Fatalf("cancelled queued run's log = %v, want its one agent:error", got)
		}
		if !tb.in.Cancel(first.RunID) {
			t.Fatal("Cancel(first) did not find the running run")
		}
		waitRecord(t, tb.store, first.RunID, status(core.RunCancelled))
		synctest.Wait() // the freed worker has done what it will: it must not pick the cancelled run up
		if model.Calls() != 1 {
			t.Fatalf("model called %d times, want 1: the cancelled queued run started", model.Calls())
		}
	})
}

// lostAttempt makes the state a process killed during attempt 1 of a
// background run leaves: an earlier exchange in the session, then the lost
// attempt's user message and crumbs, and a record still running under a
// lease that lapsed.
func lostAttempt(t *testing.T, tb *testbed, runID, agentID string, attempt int) {
	t.Helper()
	ctx := t.Context()
	if _, err := tb.store.CreateSession(ctx, core.NewSession{ID: "s", AgentID: agentID}); err != nil {
		t.Fatal(err)
	}
	old := core.NowMillis() - 60_000
	for _, m := range []core.Message{
		{Role: core.RoleUser, Parts: []core.Part{core.TextPart("earlier question")}},
		{Role: core.RoleAssistant, Parts: []core.Part{core.TextPart("earlier answer")}},
	} {
		raw, _ := json.Marshal(m)
		if err := tb.store.AddMessage(ctx, "s", core.SessionMessage{ID: string(m.Role) + "-earlier", SessionID: "s", Role: m.Role, Content: raw, Timestamp: old}); err != nil {
			t.Fatal(err)
		}
	}
	started := core.NowMillis() - 5_000
	raw, _ := json.Marshal(core.Message{Role: core.RoleUser, Parts: []core.Part{core.TextPart("the job")}})
	if err := tb.store.AddMessage(ctx, "s", core.SessionMessage{ID: "lost-user", SessionID: "s", Role: core.RoleUser, Content: raw, Timestamp: started + 10}); err != nil {
		t.Fatal(err)
	}
	start := &core.AgentRunStart{CrumbBase: core.CrumbBase{AgentID: agentID, RunID: runID, SessionID: "s", Seq: 1, Timestamp: started}}
	if err := tb.store.AppendCrumbs(ctx, []core.CrumbLogEntry{{RunID: runID, Seq: 1, SessionID: "s", AgentID: agentID, Type: core.TypeAgentRunStart, Crumb: start, CreatedAt: started}}); err != nil {
		t.Fatal(err)
	}
	// The record last, as the attempt's writes all came while its lease
	// was live: the instance's sweeper may find the lapsed lease from
	// here on, and must find what the dead attempt left.
	if err := tb.store.PutRun(ctx, core.RunRecord{ID: runID, AgentID: agentID, SessionID: "s", Status: core.RunRunning,
		Owner: "dead-replica", LeaseUntil: started + 1_000, Attempt: attempt, CreatedAt: started - 1_000, UpdatedAt: started}); err != nil {
		t.Fatal(err)
	}
}

func retryAgent(id string, max int) *core.Agent {
	a := textAgent(id)
	a.OnLost = core.LostPolicy{Action: core.LostRetry, MaxAttempts: max}
	return a
}

func TestLostBackgroundRunIsRetriedFromBeforeItsAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbed(t, modeltest.New(modeltest.Text("retried answer")), []*core.Agent{retryAgent("writer", 3)}, withQueue(1))
		lostAttempt(t, tb, "run-1", "writer", 1)
		if err := tb.in.WorkJobForTest(t.Context(), engine.RunJobForTest("run-1", "writer", "the job", "s", "")); err != nil {
			t.Fatal(err)
		}
		rec := waitRecord(t, tb.store, "run-1", status(core.RunCompleted))
		if rec.Attempt != 2 {
			t.Fatalf("record = %+v, want attempt 2 completed", rec)
		}
		var texts []string
		for _, m := range tb.messages(t, "s") {
			for _, p := range m.Parts {
				texts = append(texts, string(m.Role)+": "+p.Text)
			}
		}
		want := []string{"user: earlier question", "assistant: earlier answer", "user: the job", "assistant: retried answer"}
		if asJSON(t, texts) != asJSON(t, want) {
			t.Fatalf("session after the retry = %q, want %q: the lost attempt's message must be removed, the earlier exchange kept", texts, want)
		}
		types := loggedTypes(t, tb.store, "run-1")
		if count(types, core.TypeAgentRunStart) != 2 || count(types, core.TypeAgentError) != 0 || types[len(types)-1] != core.TypeAgentRunEnd {
			t.Fatalf("crumb log = %v, want the lost attempt's start, then the retry to its end, no RUN_LOST", types)
		}
	})
}

// retriedMeanwhile is a store on which a lost run's job, handed out again
// on another replica, retries the run right after this instance's sweeper
// won LoseRun on it and before the sweeper writes what it decided: the
// retry's record goes running under its own token.
type retriedMeanwhile struct {
	*memory.Store
	retry bool
}

func (s *retriedMeanwhile) LoseRun(ctx context.Context, id string, now int64) (bool, error) {
	won, err := s.Store.LoseRun(ctx, id, now)
	if err != nil || !won || !s.retry {
		return won, err
	}
	rec, err := s.GetRun(ctx, id)
	if err != nil {
		return false, err
	}
	rec.Status, rec.Owner, rec.LeaseUntil, rec.ErrorCode = core.RunRunning, "other-replica", now+60_000, ""
	rec.Attempt, rec.Fence = rec.Attempt+1, "retry-token"
	return won, s.PutRun(ctx, rec)
}

// A sweeper that finds a background run lost, whose onLost policy retries
// it, leaves it queued for its job only while no attempt took it since
// its LoseRun, and never gives the record back the lost attempt's token:
// that attempt (paused, not dead) stays fenced out.
func TestASweptRunIsLeftToItsRetry(t *testing.T) {
	cases := []struct {
		name    string
		retry   bool // the run's job retries it between LoseRun and the sweeper's write
		status  core.RunStatus
		attempt int
		fence   string
	}{
		{name: "queued for its job", status: core.RunQueued, attempt: 1},
		{name: "its job retried it meanwhile: the retry's record stands", retry: true, status: core.RunRunning, attempt: 2, fence: "retry-token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				store := &retriedMeanwhile{Store: memory.New(), retry: c.retry}
				if _, err := store.CreateSession(ctx, core.NewSession{ID: "s", AgentID: "writer"}); err != nil {
					t.Fatal(err)
				}
				now := core.NowMillis()
				if err := store.PutRun(ctx, core.RunRecord{ID: "run-1", AgentID: "writer", SessionID: "s", Status: core.RunRunning,
					Owner: "dead-replica", LeaseUntil: now - 1_000, Attempt: 1, Fence: "lost-token", CreatedAt: now - 5_000, UpdatedAt: now - 5_000}); err != nil {
					t.Fatal(err)
				}
				newTestbed(t, modeltest.New(), []*core.Agent{retryAgent("writer", 3)}, withQueue(1), func(cfg *engine.Config) { cfg.Store = store })
				synctest.Wait() // the keeper's first sweep
				if rec := getRun(t, store, "run-1"); rec.Status != c.status || rec.Attempt != c.attempt || rec.Fence != c.fence {
					t.Fatalf("record after the sweep: %s attempt %d fence %q, want %s attempt %d fence %q", rec.Status, rec.Attempt, rec.Fence, c.status, c.attempt, c.fence)
				}
				lost := core.WithRunFence(ctx, core.RunFence{RunID: "run-1", Token: "lost-token"})
				late := &core.TextDelta{CrumbBase: core.CrumbBase{AgentID: "writer", RunID: "run-1", SessionID: "s", Seq: 1}, Delta: "late"}
				err := store.AppendCrumbs(lost, []core.CrumbLogEntry{{RunID: "run-1", Seq: 1, SessionID: "s", AgentID: "writer", Type: core.TypeTextDelta, Crumb: late}})
				if !errors.Is(err, core.ErrRunTaken) {
					t.Fatalf("a write of the lost attempt after the sweep: %v, want it refused as taken", err)
				}
			})
		})
	}
}

func withWebhooks(c *engine.Config) {
	c.Webhooks = engine.WebhookOptions{Secret: "s3cret", AllowPrivateNetworks: true}
}

func TestLostBackgroundRunEndsPerItsPolicy(t *testing.T) {
	cases := []struct {
		name    string
		agent   *core.Agent
		attempt int
	}{
		{"onLost fail", textAgent("writer"), 1},
		{"onLost retry with no attempt left", retryAgent("writer", 2), 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			model := modeltest.New(modeltest.Text("must not run"))
			// The lease keeper sweeps once, at Start, and the lapsed run
			// is laid out only after that sweep: the job's worker, not the
			// sweeper, finds the lapsed lease.
			clock := newSweepOnce()
			tb := newTestbed(t, model, []*core.Agent{c.agent}, withQueue(1), withWebhooks, func(c *engine.Config) { c.Clock = clock })
			hook := newWebhookReceiver(t)
			<-clock.Swept
			lostAttempt(t, tb, "run-1", "writer", c.attempt)
			if err := tb.in.WorkJobForTest(t.Context(), engine.RunJobForTest("run-1", "writer", "the job", "s", hook.srv.URL)); err != nil {
				t.Fatal(err)
			}
			rec, _ := tb.store.GetRun(t.Context(), "run-1")
			if rec.Status != core.RunLost || rec.ErrorCode != core.CodeRunLost {
				t.Fatalf("record = %+v, want lost with RUN_LOST", rec)
			}
			if types := loggedTypes(t, tb.store, "run-1"); count(types, core.TypeAgentError) != 1 || types[len(types)-1] != core.TypeAgentError {
				t.Fatalf("crumb log = %v, want it to end with one agent:error RUN_LOST", types)
			}
			if got := hook.wait(t, 1)[0].record(); got.ID != "run-1" || got.Status != core.RunLost {
				t.Fatalf("webhook got %+v, want run-1 lost", got)
			}
			if model.Calls() != 0 {
				t.Fatal("the lost run ran again")
			}
			// The job handed out once more (a retry of the queue's) finds
			// the run ended and does nothing.
			if err := tb.in.WorkJobForTest(t.Context(), engine.RunJobForTest("run-1", "writer", "the job", "s", "")); err != nil || model.Calls() != 0 {
				t.Fatalf("second delivery: err %v, model calls %d", err, model.Calls())
			}
			if got := loggedTypes(t, tb.store, "run-1"); count(got, core.TypeAgentError) != 1 {
				t.Fatalf("crumb log after a second delivery = %v, want still one agent:error", got)
			}
		})
	}
}

func TestJobOfARunHeldByALiveReplicaIsSnoozed(t *testing.T) {
	model := modeltest.New(modeltest.Text("must not run"))
	tb := newTestbed(t, model, []*core.Agent{retryAgent("writer", 3)}, withQueue(1))
	if _, err := tb.store.CreateSession(t.Context(), core.NewSession{ID: "s", AgentID: "writer"}); err != nil {
		t.Fatal(err)
	}
	now := core.NowMillis()
	live := core.RunRecord{ID: "run-1", AgentID: "writer", SessionID: "s", Status: core.RunRunning, Owner: "other-replica", LeaseUntil: now + 60_000, Attempt: 1, CreatedAt: now, UpdatedAt: now}
	if err := tb.store.PutRun(t.Context(), live); err != nil {
		t.Fatal(err)
	}
	err := tb.in.WorkJobForTest(t.Context(), engine.RunJobForTest("run-1", "writer", "x", "s", ""))
	var snooze *core.JobSnooze
	if !errors.As(err, &snooze) || snooze.After < 59*time.Second {
		t.Fatalf("WorkJob = %v, want a snooze until the live lease could lapse", err)
	}
	if rec, _ := tb.store.GetRun(t.Context(), "run-1"); rec.Status != core.RunRunning || rec.Owner != "other-replica" || model.Calls() != 0 {
		t.Fatalf("record = %+v, model calls %d: a run held by a live replica was touched", rec, model.Calls())
	}
}

func TestSweeperLeavesARetriedRunToItsJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbed(t, modeltest.New(modeltest.Text("x")), []*core.Agent{retryAgent("writer", 3), textAgent("plain")}, withQueue(1), func(c *engine.Config) {
			c.RunLease = 200 * time.Millisecond
		})
		lostAttempt(t, tb, "run-1", "writer", 1)
		// A run of an agent without the policy, for contrast.
		now := core.NowMillis()
		if err := tb.store.PutRun(t.Context(), core.RunRecord{ID: "run-2", AgentID: "plain", SessionID: "s", Status: core.RunRunning, Owner: "dead-replica", LeaseUntil: now - 1, Attempt: 1, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		waitRecord(t, tb.store, "run-2", status(core.RunLost))
		// The retried run waits for its job as queued, its attempt kept.
		rec := waitRecord(t, tb.store, "run-1", status(core.RunQueued))
		if rec.Attempt != 1 || rec.Owner != "" {
			t.Fatalf("the run left to its job: %+v", rec)
		}
		if got := loggedTypes(t, tb.store, "run-1"); count(got, core.TypeAgentError) != 0 {
			t.Fatalf("the sweeper ended a run its job will retry: %v", got)
		}
		if got := loggedTypes(t, tb.store, "run-2"); count(got, core.TypeAgentError) != 1 {
			t.Fatalf("the sweeper did not end a lost run without a retry policy: %v", got)
		}
		// The job, handed out again, retries it.
		if err := tb.in.WorkJobForTest(t.Context(), engine.RunJobForTest("run-1", "writer", "the job", "s", "")); err != nil {
			t.Fatal(err)
		}
		if rec := waitRecord(t, tb.store, "run-1", status(core.RunCompleted)); rec.Attempt != 2 {
			t.Fatalf("the retried run: %+v, want attempt 2", rec)
		}
	})
}

func TestScheduleTickStartsOneRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbed(t, modeltest.New(modeltest.Text("report")), []*core.Agent{textAgent("writer")}, withQueue(2), func(c *engine.Config) {
			c.Schedules = []engine.Schedule{{Name: "nightly", Spec: "0 3 * * *", TimeZone: "Europe/Rome", AgentID: "writer", Input: "write the report"}}
		})
		at := time.Unix(1_800_000_000, 0)
		tick := core.Job{Kind: core.JobKindTick, Key: core.ScheduleTickKey("nightly", at)}
		for range 2 { // a tick handed out twice is one run
			if err := tb.in.WorkJobForTest(t.Context(), tick); err != nil {
				t.Fatal(err)
			}
		}
		runID := engine.ScheduleRunID("nightly", at)
		waitRecord(t, tb.store, runID, status(core.RunCompleted))
		runs, _ := tb.store.ListRuns(t.Context(), core.RunFilter{AgentID: "writer"})
		if len(runs) != 1 || tb.model.Calls() != 1 {
			t.Fatalf("runs = %+v, model calls %d; want one run for one tick", runs, tb.model.Calls())
		}
		list := tb.in.Schedules()
		if len(list) != 1 || list[0].Name != "nightly" || list[0].Next.IsZero() {
			t.Fatalf("Schedules() = %+v", list)
		}
		rome, _ := time.LoadLocation("Europe/Rome")
		if n := list[0].Next.In(rome); n.Hour() != 3 || n.Minute() != 0 {
			t.Fatalf("next tick %v is not 03:00 in Rome", n)
		}
	})
}

func TestSchedulesFireInProcessWithoutAQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbed(t, modeltest.New(modeltest.Text("tick")), []*core.Agent{textAgent("writer")}, func(c *engine.Config) {
			c.Schedules = []engine.Schedule{{Name: "often", Spec: "@every 1s", AgentID: "writer", Input: "go", Session: "log"}}
		})
		var runs []core.RunRecord
		settle(t, "two ticks ran", func() bool { // fake time: two seconds pass at once
			runs, _ = tb.store.ListRuns(t.Context(), core.RunFilter{AgentID: "writer", Status: core.RunCompleted})
			return len(runs) >= 2
		})
		for _, r := range runs {
			if r.SessionID != "log" {
				t.Fatalf("run %+v is not in the schedule's session", r)
			}
		}
	})
}

func TestScheduleConfigurationErrors(t *testing.T) {
	cases := []struct {
		name string
		s    []engine.Schedule
	}{
		{"bad cron", []engine.Schedule{{Name: "a", Spec: "every day", AgentID: "writer"}}},
		{"sub-second interval", []engine.Schedule{{Name: "a", Spec: "@every 10ms", AgentID: "writer"}}},
		{"unknown zone", []engine.Schedule{{Name: "a", Spec: "0 * * * *", TimeZone: "Mars/Olympus", AgentID: "writer"}}},
		{"unknown agent", []engine.Schedule{{Name: "a", Spec: "@every 1m", AgentID: "nobody"}}},
		{"no name", []engine.Schedule{{Spec: "@every 1m", AgentID: "writer"}}},
		{"twice", []engine.Schedule{{Name: "a", Spec: "@every 1m", AgentID: "writer"}, {Name: "a", Spec: "@every 2m", AgentID: "writer"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := engine.New(engine.Config{Store: memory.New(), Agents: []*core.Agent{textAgent("writer")}, Schedules: c.s})
			if err != nil {
				t.Fatal(err)
			}
			err = in.Start(context.Background())
			wantCode(t, err, core.CodeInvalidConfig)
			_ = in.Stop(context.Background())
		})
	}
}

func TestOnLostPolicyIsChecked(t *testing.T) {
	a := textAgent("writer")
	a.OnLost = core.LostPolicy{Action: "retyr"}
	_, err := engine.New(engine.Config{Store: memory.New(), Agents: []*core.Agent{a}})
	wantCode(t, err, core.CodeInvalidConfig)
}

// webhookReceiver keeps each delivery's body and signature header. It
// listens on a real socket (the engine's webhook client dials through its
// network guard), so the tests that use it run outside synctest bubbles
// and wait for deliveries as they arrive.
type webhookReceiver struct {
	mu      sync.Mutex
	got     []delivery
	arrived chan struct{} // closed and replaced at every delivery
	srv     *httptest.Server
}

type delivery struct {
	body      []byte
	signature string
}

// record is the run record a delivery carries.
func (d delivery) record() core.RunRecord {
	var rec core.RunRecord
	_ = json.Unmarshal(d.body, &rec)
	return rec
}

func newWebhookReceiver(t *testing.T) *webhookReceiver {
	r := &webhookReceiver{arrived: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, delivery{b, req.Header.Get(engine.SignatureHeader)})
		close(r.arrived)
		r.arrived = make(chan struct{})
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// wait returns the deliveries once there are n, as each one arrives; the
// ten seconds only bound a test that fails.
func (r *webhookReceiver) wait(t *testing.T, n int) []delivery {
	t.Helper()
	bound := time.NewTimer(10 * time.Second)
	defer bound.Stop()
	for {
		r.mu.Lock()
		got, arrived := append([]delivery(nil), r.got...), r.arrived
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-arrived:
		case <-bound.C:
			t.Fatalf("%d deliveries, want %d", len(got), n)
		}
	}
}

// signedWith reports whether d's signature is the HMAC of its body with
// secret.
func signedWith(d delivery, secret string) bool {
	ts, _, _ := strings.Cut(strings.TrimPrefix(d.signature, "t="), ",")
	unix, err := strconv.ParseInt(ts, 10, 64)
	return err == nil && d.signature == engine.SignWebhook(secret, time.Unix(unix, 0), d.body)
}

// A webhook secret named in the credential provider signs each delivery
// with its value at that moment, so a rotated secret signs the next one; a
// secret the provider does not have refuses the run before it starts.
func TestWebhookSecretFromTheCredentialProvider(t *testing.T) {
	var mu sync.Mutex
	secret := "first"
	creds := core.CredentialFunc(func(_ context.Context, name string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if name != "HOOK_SECRET" {
			return "", &core.BreadError{Code: core.CodeCredentialUnavailable, Message: "no " + name}
		}
		return secret, nil
	})
	tb := newTestbed(t, modeltest.New(modeltest.Text("done")), []*core.Agent{textAgent("writer")}, func(c *engine.Config) {
		c.Credentials = creds
		c.Webhooks = engine.WebhookOptions{SecretCredential: "HOOK_SECRET", AllowPrivateNetworks: true}
	})
	hook := newWebhookReceiver(t)
	if _, err := tb.in.RunBackground(t.Context(), "writer", "one", core.RunOptions{}, core.BackgroundOptions{Webhook: hook.srv.URL}); err != nil {
		t.Fatal(err)
	}
	first := hook.wait(t, 1)[0]
	mu.Lock()
	secret = "rotated"
	mu.Unlock()
	if _, err := tb.in.RunBackground(t.Context(), "writer", "two", core.RunOptions{}, core.BackgroundOptions{Webhook: hook.srv.URL}); err != nil {
		t.Fatal(err)
	}
	second := hook.wait(t, 2)[1]
	if !signedWith(first, "first") || !signedWith(second, "rotated") || signedWith(second, "first") {
		t.Fatalf("signatures %q and %q do not follow the credential", first.signature, second.signature)
	}

	other := newTestbed(t, modeltest.New(modeltest.Text("done")), []*core.Agent{textAgent("writer")}, func(c *engine.Config) {
		c.Credentials = creds
		c.Webhooks = engine.WebhookOptions{SecretCredential: "MISSING", AllowPrivateNetworks: true}
	})
	_, err := other.in.RunBackground(t.Context(), "writer", "x", core.RunOptions{}, core.BackgroundOptions{Webhook: hook.srv.URL})
	wantCode(t, err, core.CodeValidationError)
	if other.model.Calls() != 0 {
		t.Fatal("a run whose webhook cannot be signed started")
	}
}

// A background run's webhook hears of its suspension for a human, and the
// resume that continues it tells the same webhook how it ended, on the
// goroutine path and through a job queue; a refused resume tells nothing.
func TestWebhookFollowsAResumedBackgroundRun(t *testing.T) {
	for _, queue := range []bool{false, true} {
		t.Run(map[bool]string{false: "goroutine", true: "job queue"}[queue], func(t *testing.T) {
			mutate := []func(*engine.Config){withWebhooks}
			if queue {
				mutate = append(mutate, withQueue(1))
			}
			tb := newTestbed(t, modeltest.New(
				modeltest.ToolCall("human_approve_publish", map[string]string{"url": "https://bread.dev"}),
				modeltest.Text("Published."),
			), []*core.Agent{askAgent()}, mutate...)
			hook := newWebhookReceiver(t)
			d, err := tb.in.RunBackground(t.Context(), "publisher", "publish it", core.RunOptions{}, core.BackgroundOptions{Webhook: hook.srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			if got := hook.wait(t, 1)[0].record(); got.Status != core.RunSuspended {
				t.Fatalf("first delivery %+v, want suspended", got)
			}
			rec, err := tb.store.GetRun(t.Context(), d.RunID)
			if err != nil || rec.Status != core.RunSuspended {
				t.Fatalf("record %+v (%v), want suspended", rec, err)
			}
			if _, err := collect(tb.in.Resume(t.Context(), rec.CheckpointID, "not an object")); err == nil {
				t.Fatal("an invalid answer was accepted")
			}
			if _, err := collect(tb.in.Resume(t.Context(), rec.CheckpointID, map[string]any{})); err != nil {
				t.Fatal(err)
			}
			got := hook.wait(t, 2)[1].record()
			if got.ID != d.RunID || got.Status != core.RunCompleted {
				t.Fatalf("second delivery %+v, want the run completed", got)
			}
			// Stop waits for every delivery in flight: none is left to
			// tell of the refused resume.
			if err := tb.in.Stop(t.Context()); err != nil {
				t.Fatal(err)
			}
			if n := len(hook.wait(t, 2)); n != 2 {
				t.Fatalf("%d deliveries, want 2: the refused resume told the webhook", n)
			}
		})
	}
}

// sweptAtItsEnd is a store on which the replica running a background run
// is paused past its lease right before its end write: another replica's
// sweeper declares the run lost and, its onLost retrying it, records it
// queued for its job (with no token, as LoseRun leaves it); then the
// paused replica wakes and its end write goes to the store, under the
// run's fence.
type sweptAtItsEnd struct {
	*memory.Store
	once sync.Once
	hit  bool
}

func (s *sweptAtItsEnd) WriteRun(ctx context.Context, w core.RunWrite) (bool, error) {
	if f, ok := core.RunFenceFrom(ctx); ok && w.Run != nil && w.Run.Status.Final() {
		s.once.Do(func() {
			s.hit = true
			ctx := context.Background() // the other replica's
			cur := sweepNow(s.Store, f.RunID)
			cur.Status, cur.Owner, cur.LeaseUntil, cur.ErrorCode, cur.Fence = core.RunQueued, "", 0, "", ""
			if err := s.Store.PutRun(core.WithRunFence(ctx, core.RunFence{RunID: f.RunID}), cur); err != nil {
				panic(err)
			}
		})
	}
	return s.Store.WriteRun(ctx, w)
}

// A background attempt refused as taken because a sweeper left its run to
// its job to retry does not end that job: the job is snoozed, and handed
// out again it retries the run (found by the chaos harness: a replica
// paused for less than the queue's rescue delay woke, its attempt was
// refused, its job ended, and the run stayed queued for good).
func TestAnAttemptTakenForItsOwnJobsRetryLeavesTheJobToRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		store := &sweptAtItsEnd{Store: memory.New()}
		model := modeltest.New(modeltest.Text("first answer"), modeltest.Text("retried answer"))
		// The lease keeper sweeps once, at Start: the sweeper here is the
		// store's.
		clock := newSweepOnce()
		tb := newTestbed(t, model, []*core.Agent{retryAgent("writer", 3)}, withQueue(1), func(c *engine.Config) { c.Store, c.Clock = store, clock })
		<-clock.Swept
		if _, err := store.CreateSession(ctx, core.NewSession{ID: "s", AgentID: "writer"}); err != nil {
			t.Fatal(err)
		}
		now := core.NowMillis()
		if err := store.PutRun(ctx, core.RunRecord{ID: "run-1", AgentID: "writer", SessionID: "s", Status: core.RunQueued, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		job := engine.RunJobForTest("run-1", "writer", "the job", "s", "")
		err := tb.in.WorkJobForTest(ctx, job)
		if !store.hit {
			t.Fatalf("the sweeper never acted: %v", err)
		}
		var snooze *core.JobSnooze
		if !errors.As(err, &snooze) {
			t.Fatalf("the job of the taken attempt: %v, want it snoozed (the run is left to it: %+v)", err, getRun(t, store, "run-1"))
		}
		if err := tb.in.WorkJobForTest(ctx, job); err != nil {
			t.Fatal(err)
		}
		if rec := getRun(t, store, "run-1"); rec.Status != core.RunCompleted || rec.Attempt != 2 {
			t.Fatalf("record after the job's next hand-out: %+v, want completed by attempt 2", rec)
		}
	})
}
