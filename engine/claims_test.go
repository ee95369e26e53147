package engine_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// gatedSetup is an agent whose weather tool needs approval, suspended on
// its checkpoint, on a store shared by whatever instances a test starts.
type gatedSetup struct {
	store *memory.Store
	agent *core.Agent
	hr    *core.HumanRequired
	mu    sync.Mutex
	keys  []string // IdempotencyKey of every execution of the tool
	block chan struct{}
}

func newGatedSetup(t *testing.T) *gatedSetup {
	g := &gatedSetup{store: memory.New()}
	tool := weatherTool()
	inner := tool.Execute
	tool.Execute = func(ctx context.Context, raw json.RawMessage, tc core.ToolContext) (any, error) {
		g.mu.Lock()
		g.keys = append(g.keys, tc.IdempotencyKey)
		block := g.block
		g.mu.Unlock()
		if block != nil {
			close(block)
			<-ctx.Done() // a tool stuck until its run ends
			return nil, ctx.Err()
		}
		return inner(ctx, raw, tc)
	}
	g.agent = &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{tool}, Permissions: core.Permissions{Ask: []string{"tool:weather"}}}
	in := g.instance(t, modeltest.ToolCall("tool_weather", cityArgs{City: "Rome"}))
	cs, _ := collect(in.Run(context.Background(), "a", "x", core.RunOptions{}))
	g.hr = suspendOn(t, cs)
	return g
}

// instance starts an instance on the shared store whose model answers
// with turns.
func (g *gatedSetup) instance(t *testing.T, turns ...modeltest.Turn) *engine.Instance {
	t.Helper()
	in, err := engine.New(engine.Config{Store: keepOpenStore{g.store}, Agents: []*core.Agent{g.agent},
		Providers: modeltest.New(turns...).Registry("mock"), RunLease: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	return in
}

// TestAResumeWhoseProcessDiedCanBeRetried: a claim held by a process that
// no longer renews it refuses other resumes until it lapses, then the
// resume goes through, once, keyed for the tool as the first attempt was.
func TestAResumeWhoseProcessDiedCanBeRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGatedSetup(t)
		now := time.Now()
		cp, err := g.store.GetCheckpoint(context.Background(), g.hr.CheckpointID)
		if err != nil {
			t.Fatal(err)
		}
		// The dead process claimed the checkpoint for a short while.
		if _, err := g.store.ClaimCheckpoint(context.Background(), g.hr.CheckpointID, "killed-process", now.UnixMilli(), now.Add(300*time.Millisecond).UnixMilli()); err != nil {
			t.Fatal(err)
		}
		in := g.instance(t, modeltest.Text("done"))
		_, err = collect(in.Resume(context.Background(), g.hr.CheckpointID, map[string]bool{"approved": true}))
		wantCode(t, err, core.CodeCheckpointClaimed)

		time.Sleep(400 * time.Millisecond) // fake time: the dead process's claim lapses
		cont, err := collect(in.Resume(context.Background(), g.hr.CheckpointID, map[string]bool{"approved": true}))
		if err != nil {
			t.Fatalf("the retry after the claim lapsed: %v", err)
		}
		wantTypes(t, cont, core.TypeHumanResumed, core.TypeToolCall, core.TypeToolResult, core.TypeTextDelta, core.TypeAgentRunEnd)
		if _, err := g.store.GetCheckpoint(context.Background(), g.hr.CheckpointID); !isCode(err, core.CodeCheckpointNotFound) {
			t.Errorf("the checkpoint outlived its recorded continuation: %v", err)
		}
		_, err = collect(in.Resume(context.Background(), g.hr.CheckpointID, map[string]bool{"approved": true}))
		wantCode(t, err, core.CodeCheckpointNotFound)
		if want := cp.ID + ":" + cp.ToolCallID; len(g.keys) != 1 || g.keys[0] != want {
			t.Errorf("idempotency keys %v, want [%s]", g.keys, want)
		}
	})
}

// TestAStoppingInstanceGivesItsResumeBack: an instance that stops while a
// resumed run is still executing releases the checkpoint, so another
// instance resumes it at once; the tool sees the same idempotency key both
// times.
func TestAStoppingInstanceGivesItsResumeBack(t *testing.T) {
	g := newGatedSetup(t)
	g.block = make(chan struct{})
	first := g.instance(t, modeltest.Text("never"))
	done := make(chan error, 1)
	go func() {
		_, err := collect(first.Resume(context.Background(), g.hr.CheckpointID, map[string]bool{"approved": true}))
		done <- err
	}()
	<-g.block
	g.mu.Lock()
	g.block = nil
	g.mu.Unlock()
	if err := first.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantCode(t, <-done, core.CodeRunCancelled)
	cp, err := g.store.GetCheckpoint(context.Background(), g.hr.CheckpointID)
	if err != nil || cp.ClaimedBy != "" {
		t.Fatalf("after the stop: %+v, %v", cp, err)
	}
	second := g.instance(t, modeltest.Text("done"))
	if _, err := collect(second.Resume(context.Background(), g.hr.CheckpointID, map[string]bool{"approved": true})); err != nil {
		t.Fatalf("resume on the second instance: %v", err)
	}
	if len(g.keys) != 2 || g.keys[0] != g.keys[1] {
		t.Errorf("idempotency keys %v: the same call must carry the same key", g.keys)
	}
}

// TestAResumeCancelledByItsUserEnds: a resumed run the user cancels ends
// for good, and its checkpoint goes with it. Only a stop gives the claim
// back (the test above): ErrCancelRequested has the code of
// ErrInstanceStopped, and taking one for the other left the checkpoint to
// be resumed again (issue 31).
func TestAResumeCancelledByItsUserEnds(t *testing.T) {
	g := newGatedSetup(t)
	g.block = make(chan struct{})
	in := g.instance(t, modeltest.Text("never"))
	done := make(chan error, 1)
	go func() {
		_, err := collect(in.Resume(context.Background(), g.hr.CheckpointID, map[string]bool{"approved": true}))
		done <- err
	}()
	<-g.block
	g.mu.Lock()
	g.block = nil
	g.mu.Unlock()
	if !in.Cancel(g.hr.RunID) {
		t.Fatal("the resumed run is not running here")
	}
	wantCode(t, <-done, core.CodeRunCancelled)
	if cp, err := g.store.GetCheckpoint(context.Background(), g.hr.CheckpointID); !isCode(err, core.CodeCheckpointNotFound) {
		t.Fatalf("the cancelled resume's checkpoint is still there: %+v, %v", cp, err)
	}
	_, err := collect(in.Resume(context.Background(), g.hr.CheckpointID, map[string]bool{"approved": true}))
	wantCode(t, err, core.CodeCheckpointNotFound)
	if rec, err := g.store.GetRun(context.Background(), g.hr.RunID); err != nil || rec.Status != core.RunCancelled {
		t.Errorf("the run's record: %+v, %v; want cancelled", rec, err)
	}
	if len(g.keys) != 1 {
		t.Errorf("the tool ran %d times, want once", len(g.keys))
	}
}

// keepOpenStore is the shared store as one instance sees it: stopping that
// instance does not close it for the others.
type keepOpenStore struct{ *memory.Store }

func (keepOpenStore) Close() error { return nil }

func isCode(err error, code string) bool {
	be, ok := err.(*core.BreadError)
	return ok && be.Code == code
}

// annotator keeps the suspending run's id on its checkpoint.
type annotator struct{}

func (annotator) Name() string { return "annotator" }
func (annotator) AnnotateCheckpoint(ctx context.Context) map[string]string {
	ri, _ := engine.RunFromContext(ctx)
	return map[string]string{"annotator.run": ri.RunID}
}

// TestCheckpointMetaCrossesProcesses: what a plugin attaches to a
// suspension reaches the resumed run's context on another instance.
func TestCheckpointMetaCrossesProcesses(t *testing.T) {
	store := memory.New()
	var seen map[string]string
	tool := weatherTool()
	inner := tool.Execute
	tool.Execute = func(ctx context.Context, raw json.RawMessage, tc core.ToolContext) (any, error) {
		seen = core.CheckpointMetaFrom(ctx)
		return inner(ctx, raw, tc)
	}
	agent := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{tool}, Permissions: core.Permissions{Ask: []string{"tool:weather"}}}
	start := func(turns ...modeltest.Turn) *engine.Instance {
		in, err := engine.New(engine.Config{Store: keepOpenStore{store}, Agents: []*core.Agent{agent},
			Providers: modeltest.New(turns...).Registry("mock"), Plugins: []core.BreadPlugin{annotator{}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := in.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = in.Stop(context.Background()) })
		return in
	}
	cs, _ := collect(start(modeltest.ToolCall("tool_weather", cityArgs{City: "Rome"})).Run(context.Background(), "a", "x", core.RunOptions{}))
	hr := suspendOn(t, cs)
	if _, err := collect(start(modeltest.Text("done")).Resume(context.Background(), hr.CheckpointID, map[string]bool{"approved": true})); err != nil {
		t.Fatal(err)
	}
	if seen["annotator.run"] != hr.RunID {
		t.Fatalf("the resumed run's context carries %v, want the suspended run's annotation", seen)
	}
}

// TestALostResumeWaitsForItsRetryInsteadOfEnding is issue 31's first path:
// a resume whose process died mid-way leaves its checkpoint for a retry, so
// the sweeper must not end the run. Its record goes back to suspended on
// the checkpoint with RUN_LOST (waiting for a retry, not ended), no
// RUN_LOST crumb is logged, and the retried resume ends the run exactly
// once.
func TestALostResumeWaitsForItsRetryInsteadOfEnding(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGatedSetup(t)
		ctx := context.Background()
		now := time.Now()
		rec, err := g.store.GetRun(ctx, g.hr.RunID)
		if err != nil {
			t.Fatal(err)
		}
		// The dead process had claimed the checkpoint, recorded the run
		// running under its lease, and logged human:resumed.
		if _, err := g.store.ClaimCheckpoint(ctx, g.hr.CheckpointID, "killed-process", now.UnixMilli(), now.Add(300*time.Millisecond).UnixMilli()); err != nil {
			t.Fatal(err)
		}
		rec.Status, rec.Owner, rec.LeaseUntil, rec.CheckpointID = core.RunRunning, "killed-process", now.Add(300*time.Millisecond).UnixMilli(), g.hr.CheckpointID
		if err := g.store.PutRun(ctx, rec); err != nil {
			t.Fatal(err)
		}
		last, err := g.store.MaxCrumbSeq(ctx, g.hr.RunID)
		if err != nil {
			t.Fatal(err)
		}
		resumed := &core.HumanResumed{CrumbBase: core.CrumbBase{AgentID: "a", RunID: g.hr.RunID, SessionID: g.hr.SessionID, Seq: last + 1}, CheckpointID: g.hr.CheckpointID, Response: map[string]bool{"approved": true}, Kind: core.HumanApproval}
		if err := g.store.AppendCrumbs(ctx, []core.CrumbLogEntry{{RunID: g.hr.RunID, Seq: last + 1, SessionID: g.hr.SessionID, AgentID: "a", Type: core.TypeHumanResumed, Crumb: resumed, CreatedAt: now.UnixMilli()}}); err != nil {
			t.Fatal(err)
		}

		in := g.instance(t, modeltest.Text("done"))
		settle(t, "the lost resume's record", func() bool { return getRun(t, g.store, g.hr.RunID).Status != core.RunRunning })
		time.Sleep(time.Second) // fake time: sweeps enough for a wrong end to show up
		synctest.Wait()
		got := getRun(t, g.store, g.hr.RunID)
		if got.Status != core.RunSuspended || got.ErrorCode != core.CodeRunLost || got.CheckpointID != g.hr.CheckpointID || got.Status.Final() {
			t.Fatalf("the lost resume's record: %+v; want suspended on %s with RUN_LOST", got, g.hr.CheckpointID)
		}
		if n, _ := g.store.MaxCrumbSeq(ctx, g.hr.RunID); n != last+1 {
			t.Fatalf("the sweeper logged past human:resumed (max seq %d, want %d)", n, last+1)
		}

		cont, err := collect(in.Resume(ctx, g.hr.CheckpointID, map[string]bool{"approved": true}))
		if err != nil {
			t.Fatalf("the retried resume: %v", err)
		}
		wantTypes(t, cont, core.TypeHumanResumed, core.TypeToolCall, core.TypeToolResult, core.TypeTextDelta, core.TypeAgentRunEnd)
		logged, err := g.store.GetCrumbs(ctx, g.hr.RunID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		ends := 0
		for i, e := range logged {
			if e.Seq != int64(i+1) {
				t.Fatalf("crumb log has a gap at %d: seq %d", i+1, e.Seq)
			}
			if e.Type == core.TypeAgentError || e.Type == core.TypeAgentRunEnd {
				ends++
			}
		}
		if ends != 1 || logged[len(logged)-1].Type != core.TypeAgentRunEnd {
			t.Fatalf("the run ended %d times; log ends with %s", ends, logged[len(logged)-1].Type)
		}
		if got := getRun(t, g.store, g.hr.RunID); got.Status != core.RunCompleted || got.ErrorCode != "" {
			t.Fatalf("after the retry: %+v", got)
		}
	})
}
