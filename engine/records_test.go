package engine_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// settle runs inside a synctest bubble: it lets every goroutine of the
// bubble run until all of them block, then moves the fake clock on a
// millisecond at a time (timers fire in order, instantly) until cond
// holds, for at most a minute of fake time.
func settle(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		synctest.Wait()
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after a minute of fake time", what)
		}
		time.Sleep(time.Millisecond) // fake time: advances the bubble's clock
	}
}

func getRun(t *testing.T, s core.RunStore, id string) core.RunRecord {
	t.Helper()
	r, err := s.GetRun(context.Background(), id)
	if err != nil {
		t.Fatalf("GetRun(%s): %v", id, err)
	}
	return r
}

func TestRunRecordsFollowTheLifecycle(t *testing.T) {
	tb := newTestbed(t, modeltest.New(
		modeltest.Text("done"),
		modeltest.ToolCall("human_approve_publish", map[string]string{"url": "https://bread.dev"}),
		modeltest.Text("Published."),
		modeltest.Fail(&core.BreadError{Code: core.CodeProviderAuth, Message: "bad key"}),
	), []*core.Agent{textAgent("a"), askAgent()})

	cs, err := tb.run(t, "a", "hi", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := getRun(t, tb.store, cs[0].Base().RunID)
	if r.Status != core.RunCompleted || r.AgentID != "a" || r.SessionID != cs[0].Base().SessionID || r.Owner != "" || r.LeaseUntil != 0 {
		t.Errorf("a completed run: %+v", r)
	}

	cs, _ = tb.run(t, "publisher", "publish", core.RunOptions{})
	hr := suspendOn(t, cs)
	if r := getRun(t, tb.store, hr.RunID); r.Status != core.RunSuspended || r.CheckpointID != hr.CheckpointID {
		t.Errorf("a suspended run: %+v", r)
	}
	if _, err := collect(tb.in.Resume(context.Background(), hr.CheckpointID, map[string]any{"ok": true})); err != nil {
		t.Fatal(err)
	}
	if r := getRun(t, tb.store, hr.RunID); r.Status != core.RunCompleted || r.CheckpointID != "" {
		t.Errorf("the resumed run: %+v", r)
	}

	cs, _ = tb.run(t, "a", "hi", core.RunOptions{})
	if r := getRun(t, tb.store, cs[0].Base().RunID); r.Status != core.RunFailed || r.ErrorCode != core.CodeProviderAuth {
		t.Errorf("a failed run: %+v", r)
	}
}

func TestARunHoldsItsLeaseWhileRunningAndIsCancelledOnRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const lease = 150 * time.Millisecond
		reached := make(chan struct{})
		tb := newTestbed(t, modeltest.New(modeltest.Block(reached, "thinking")), []*core.Agent{textAgent("a")},
			func(c *engine.Config) { c.RunLease = lease })
		// A second instance on the same store sweeps for lapsed leases.
		other, err := engine.New(engine.Config{Store: tb.store, RunLease: lease})
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer other.Stop(context.Background())

		ctx, cancel := context.WithCancel(context.Background())
		var runID string
		done := make(chan struct{})
		go func() {
			defer close(done)
			for c := range tb.in.Run(ctx, "a", "hi", core.RunOptions{}) {
				if runID == "" {
					runID = c.Base().RunID
				}
			}
		}()
		<-reached
		time.Sleep(4 * lease) // fake time: four leases, renewed, never lost
		synctest.Wait()
		r := getRun(t, tb.store, runID)
		if r.Status != core.RunRunning || r.Owner == "" || r.LeaseUntil <= core.NowMillis() {
			t.Fatalf("a running run keeps a live lease: %+v", r)
		}
		cancel()
		<-done
		if r := getRun(t, tb.store, runID); r.Status != core.RunCancelled || r.ErrorCode != core.CodeRunCancelled {
			t.Errorf("a cancelled run: %+v", r)
		}
	})
}

// TestALostRunEndsWithADurableRunLost stands in for a process killed
// mid-run: its record says running, its lease lapsed, its crumbs stop at
// seq 3. A new instance on the same store ends it, once, for every tail.
func TestALostRunEndsWithADurableRunLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memory.New()
		ctx := context.Background()
		sess, err := store.CreateSession(ctx, core.NewSession{})
		if err != nil {
			t.Fatal(err)
		}
		past := core.NowMillis() - 1000
		dead := core.RunRecord{ID: "run-dead", AgentID: "a", SessionID: sess.ID, Status: core.RunRunning, Owner: "killed", LeaseUntil: past, CreatedAt: past, UpdatedAt: past}
		if err := store.PutRun(ctx, dead); err != nil {
			t.Fatal(err)
		}
		// The dead run had written its user message and nothing else.
		if err := store.AddMessage(ctx, sess.ID, core.SessionMessage{Role: core.RoleUser, Content: []byte(`{"role":"user","parts":[{"type":"text","text":"hi"}]}`), Timestamp: past}); err != nil {
			t.Fatal(err)
		}
		var entries []core.CrumbLogEntry
		for seq := int64(1); seq <= 3; seq++ {
			c := &core.TextDelta{CrumbBase: core.CrumbBase{AgentID: "a", RunID: "run-dead", SessionID: sess.ID, Seq: seq}, Delta: "x"}
			entries = append(entries, core.CrumbLogEntry{RunID: "run-dead", Seq: seq, SessionID: sess.ID, AgentID: "a", Type: core.TypeTextDelta, Crumb: c, CreatedAt: past})
		}
		if err := store.AppendCrumbs(ctx, entries); err != nil {
			t.Fatal(err)
		}

		// Two instances restart on the store at once; exactly one writes the end.
		var wg sync.WaitGroup
		instances := make([]*engine.Instance, 2)
		for i := range instances {
			in, err := engine.New(engine.Config{Store: store, RunLease: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			instances[i] = in
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := in.Start(ctx); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		defer func() {
			for _, in := range instances {
				_ = in.Stop(ctx)
			}
		}()

		settle(t, "the run is lost", func() bool { return getRun(t, store, "run-dead").Status == core.RunLost })
		// The record turns lost first; the crumb follows from the same sweeper.
		var logged []core.CrumbLogEntry
		settle(t, "the lost run's end is logged", func() bool {
			logged, err = store.GetCrumbs(ctx, "run-dead", 3, 0)
			return err != nil || len(logged) > 0
		})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second) // fake time: sweeps enough for a wrong second end to show up
		synctest.Wait()
		if logged, err = store.GetCrumbs(ctx, "run-dead", 3, 0); err != nil {
			t.Fatal(err)
		}
		if len(logged) != 1 || logged[0].Seq != 4 || logged[0].Type != core.TypeAgentError {
			t.Fatalf("after the lost run's last crumb: %+v", logged)
		}
		msgs, err := store.GetMessages(ctx, sess.ID)
		if err != nil || len(msgs) != 2 || msgs[1].Role != core.RoleAssistant || !strings.Contains(string(msgs[1].Content), "[interrupted: RUN_LOST]") {
			t.Fatalf("the lost run's session: %+v, %v", msgs, err)
		}
		ae, ok := logged[0].Crumb.(*core.AgentError)
		if !ok || ae.Error.Code != core.CodeRunLost || ae.RunID != "run-dead" || ae.SessionID != sess.ID {
			t.Fatalf("the logged end: %#v", logged[0].Crumb)
		}

	})
}

func TestStopDrainsRunsBeforeClosingTheStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reached := make(chan struct{})
		store := &closeWatch{Store: memory.New()}
		// The model takes a while to give up once cancelled, so a Stop that
		// does not wait would close the store first.
		slow := slowToCancel{reached: reached, linger: 300 * time.Millisecond}
		in, err := engine.New(engine.Config{Store: store, Agents: []*core.Agent{textAgent("a")},
			Providers: core.ProviderRegistry{"mock": func(string) (core.LanguageModel, error) { return slow, nil }}})
		if err != nil {
			t.Fatal(err)
		}
		if err := in.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		var runID string
		var runErr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			for c, err := range in.Run(context.Background(), "a", "hi", core.RunOptions{}) {
				if runID == "" {
					runID = c.Base().RunID
				}
				if err != nil {
					runErr = err
				}
			}
		}()
		<-reached
		if err := in.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		<-done
		var be *core.BreadError
		if !errors.As(runErr, &be) || be.Code != core.CodeRunCancelled {
			t.Fatalf("the run ends cancelled: %v", runErr)
		}
		// The terminal crumb and the record were written before Close.
		if !store.endLoggedBeforeClose() {
			t.Error("the run's agent:error reached the crumb log after the store closed (or never)")
		}
		if s := store.statusAtClose(runID); s != core.RunCancelled {
			t.Errorf("run status when the store closed: %q", s)
		}
		// A run after Stop began is refused with a code that tells clients to
		// retry elsewhere.
		_, err = collect(in.Run(context.Background(), "a", "hi", core.RunOptions{}))
		wantCode(t, err, core.CodeInstanceStopping)

	})
}

func TestNoRunBeforeStartHasWiredThePlugins(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	in, err := engine.New(engine.Config{Store: memory.New(), Agents: []*core.Agent{textAgent("a")},
		Providers: modeltest.New(modeltest.Text("ok")).Registry("mock"),
		Plugins:   []core.BreadPlugin{slowInit{entered: entered, release: release}}})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan error)
	go func() { started <- in.Start(context.Background()) }()
	<-entered
	_, err = collect(in.Run(context.Background(), "a", "hi", core.RunOptions{}))
	wantCode(t, err, core.CodeNotStarted)
	close(release)
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	defer in.Stop(context.Background())
	if _, err := collect(in.Run(context.Background(), "a", "hi", core.RunOptions{})); err != nil {
		t.Fatalf("after Start: %v", err)
	}
}

// slowToCancel blocks until its call is cancelled, then lingers before it
// reports the cancellation.
type slowToCancel struct {
	reached chan struct{}
	linger  time.Duration
}

func (m slowToCancel) Stream(ctx context.Context, _ core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	return func(yield func(core.ModelEvent, error) bool) {
		close(m.reached)
		<-ctx.Done()
		time.Sleep(m.linger)
		yield(core.ModelEvent{}, ctx.Err())
	}
}

type slowInit struct{ entered, release chan struct{} }

func (slowInit) Name() string { return "slow_init" }
func (p slowInit) Init(context.Context, core.Runtime) error {
	close(p.entered)
	<-p.release
	return nil
}

// closeWatch records what the store held when it was closed.
type closeWatch struct {
	*memory.Store
	mu         sync.Mutex
	closed     bool
	endLogged  bool // an agent:error was appended before Close
	lastStatus map[string]core.RunStatus
}

func (s *closeWatch) AppendCrumbs(ctx context.Context, entries []core.CrumbLogEntry) error {
	s.mu.Lock()
	for _, e := range entries {
		if e.Type == core.TypeAgentError && !s.closed {
			s.endLogged = true
		}
	}
	s.mu.Unlock()
	return s.Store.AppendCrumbs(ctx, entries)
}

func (s *closeWatch) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return s.Store.Close()
}

func (s *closeWatch) PutRun(ctx context.Context, r core.RunRecord) error {
	if err := s.Store.PutRun(ctx, r); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastStatus == nil {
		s.lastStatus = map[string]core.RunStatus{}
	}
	if !s.closed {
		s.lastStatus[r.ID] = r.Status
	}
	return nil
}

func (s *closeWatch) EndRun(ctx context.Context, r core.RunRecord, owner string) (bool, error) {
	wrote, err := s.Store.EndRun(ctx, r, owner)
	if err != nil || !wrote {
		return wrote, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastStatus == nil {
		s.lastStatus = map[string]core.RunStatus{}
	}
	if !s.closed {
		s.lastStatus[r.ID] = r.Status
	}
	return true, nil
}

func (s *closeWatch) WriteRun(ctx context.Context, w core.RunWrite) (bool, error) {
	wrote, err := s.Store.WriteRun(ctx, w)
	if err != nil || !wrote || w.Run == nil {
		return wrote, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastStatus == nil {
		s.lastStatus = map[string]core.RunStatus{}
	}
	if !s.closed {
		s.lastStatus[w.Run.ID] = w.Run.Status
	}
	return true, nil
}

func (s *closeWatch) endLoggedBeforeClose() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endLogged
}

func (s *closeWatch) statusAtClose(runID string) core.RunStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastStatus[runID]
}

func TestARunRecordsWhoStartedItAndAResumeKeepsIt(t *testing.T) {
	tb := newTestbed(t, modeltest.New(
		modeltest.ToolCall("human_approve_publish", map[string]string{"url": "https://bread.dev"}),
		modeltest.Text("Published."),
		modeltest.Text("anonymous"),
	), []*core.Agent{textAgent("a"), askAgent()})

	alice := &core.AuthIdentity{Subject: "alice", Claims: map[string]any{"bread.strategy": "jwt", "iss": "https://issuer.example"}}
	bob := &core.AuthIdentity{Subject: "bob", Claims: map[string]any{"bread.strategy": "jwt", "iss": "https://issuer.example"}}
	cs, _ := collect(tb.in.Run(core.WithIdentity(context.Background(), alice), "publisher", "publish", core.RunOptions{}))
	hr := suspendOn(t, cs)
	if r := getRun(t, tb.store, hr.RunID); r.StartedBy != core.OwnerKey(alice) || r.StartedBy == "" {
		t.Errorf("the suspended run's StartedBy = %q, want %q", r.StartedBy, core.OwnerKey(alice))
	}
	if _, err := collect(tb.in.Resume(core.WithIdentity(context.Background(), bob), hr.CheckpointID, map[string]any{"ok": true})); err != nil {
		t.Fatal(err)
	}
	if r := getRun(t, tb.store, hr.RunID); r.Status != core.RunCompleted || r.StartedBy != core.OwnerKey(alice) {
		t.Errorf("the resumed run: %+v, want StartedBy %q", r, core.OwnerKey(alice))
	}
	cs, err := tb.run(t, "a", "hi", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := getRun(t, tb.store, cs[0].Base().RunID); r.StartedBy != "" {
		t.Errorf("a run without an identity: StartedBy = %q", r.StartedBy)
	}
}

// TestARunDeclaredLostWhileItsOwnerWasPausedStaysLost is a violation the
// chaos harness found (issue 31): a replica paused (SIGSTOP) beyond its
// lease had its run declared lost by another replica (record lost, a
// durable RUN_LOST that every tail saw); resumed, it finished the run and
// recorded it completed, so the record contradicted the log. The owner
// now stops such a run at its next renewal and leaves the record lost.
func TestARunDeclaredLostWhileItsOwnerWasPausedStaysLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newBusyModel()
		store := memory.New()
		in, err := engine.New(engine.Config{Store: store, Agents: []*core.Agent{{ID: "chat", Model: mockModel()}}, RunLease: 300 * time.Millisecond,
			Providers: core.ProviderRegistry{"mock": func(string) (core.LanguageModel, error) { return m, nil }}})
		if err != nil {
			t.Fatal(err)
		}
		if err := in.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = in.Stop(context.Background()) }()
		done := make(chan runResult, 1)
		go func() {
			cs, err := collect(in.Run(context.Background(), "chat", "hold on", core.RunOptions{}))
			done <- runResult{cs, err}
		}()
		<-m.started
		synctest.Wait()
		runs, err := store.ListRuns(context.Background(), core.RunFilter{Status: core.RunRunning})
		if err != nil || len(runs) != 1 {
			t.Fatalf("running runs: %v, %v", runs, err)
		}
		rec := runs[0]
		// Another replica's sweeper, while this one could not renew: the
		// record turns lost and RUN_LOST is logged after the last crumb.
		last, _ := store.MaxCrumbSeq(context.Background(), rec.ID)
		lost := &core.AgentError{CrumbBase: core.CrumbBase{AgentID: "chat", RunID: rec.ID, SessionID: rec.SessionID, Seq: last + 1}, Error: &core.BreadError{Code: core.CodeRunLost, Message: "lost"}}
		if err := store.AppendCrumbs(context.Background(), []core.CrumbLogEntry{{RunID: rec.ID, Seq: last + 1, SessionID: rec.SessionID, AgentID: "chat", Type: core.TypeAgentError, Crumb: lost}}); err != nil {
			t.Fatal(err)
		}
		rec.Status, rec.Owner, rec.LeaseUntil, rec.ErrorCode = core.RunLost, "", 0, core.CodeRunLost
		if err := store.PutRun(context.Background(), rec); err != nil {
			t.Fatal(err)
		}

		var res runResult
		select {
		case res = <-done: // stopped at the next renewal
		case <-time.After(5 * time.Second): // fake time: the owner did not stop it; let it finish
			close(m.release)
			res = <-done
		}
		wantCode(t, res.err, core.CodeRunLost)
		if got := getRun(t, store, rec.ID); got.Status != core.RunLost || got.ErrorCode != core.CodeRunLost {
			t.Fatalf("the record after its owner stopped: %+v", got)
		}
		logged, err := store.GetCrumbs(context.Background(), rec.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		ends := 0
		for _, e := range logged {
			if e.Type == core.TypeAgentError || e.Type == core.TypeAgentRunEnd {
				ends++
			}
		}
		if ends != 1 || logged[len(logged)-1].Seq != last+1 {
			t.Fatalf("the log has %d terminal crumbs, last seq %d (want one, %d)", ends, logged[len(logged)-1].Seq, last+1)
		}
	})
}

// flakyEnds fails the first n writes of a run's end (a final record, alone
// or with the run's last messages), as a connection terminated under the
// write does.
type flakyEnds struct {
	*memory.Store
	n atomic.Int32
}

func (s *flakyEnds) EndRun(ctx context.Context, r core.RunRecord, owner string) (bool, error) {
	if r.Status.Final() && s.n.Add(-1) >= 0 {
		return false, &core.BreadError{Code: core.CodeStoreUnavailable, Message: "the connection was terminated"}
	}
	return s.Store.EndRun(ctx, r, owner)
}

func (s *flakyEnds) WriteRun(ctx context.Context, w core.RunWrite) (bool, error) {
	if w.Run != nil && w.Run.Status.Final() && s.n.Add(-1) >= 0 {
		return false, &core.BreadError{Code: core.CodeStoreUnavailable, Message: "the connection was terminated"}
	}
	return s.Store.WriteRun(ctx, w)
}

// TestARunsEndIsRecordedThroughAFailedWrite is a violation the chaos
// harness found (issue 31): pg_terminate_backend under a run's final
// record write left the completed run running for good (its owner's keeper
// renewed its lease ever after). The end write is retried. The first
// failed write here held the run's answer too (core.RunWriter): the answer
// is not stored, so the run fails, and its failed record goes through the
// second failed write and a retry.
func TestARunsEndIsRecordedThroughAFailedWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &flakyEnds{Store: memory.New()}
		store.n.Store(2)
		tb := newTestbed(t, modeltest.New(modeltest.Text("done")), []*core.Agent{textAgent("a")}, func(c *engine.Config) { c.Store = store })
		cs, err := tb.run(t, "a", "hi", core.RunOptions{})
		wantCode(t, err, core.CodeStoreUnavailable)
		if r := getRun(t, store, cs[0].Base().RunID); r.Status != core.RunFailed || r.LeaseUntil != 0 || store.n.Load() >= 0 {
			t.Fatalf("the run's record after two failed end writes: %+v", r)
		}
	})
}
