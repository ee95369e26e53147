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
