package engine_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// slowLog is a store whose crumb-log writes take a while, as a remote
// database's do (on the fake time of the test's synctest bubble).
type slowLog struct{ *memory.Store }

func (s slowLog) AppendCrumbs(ctx context.Context, entries []core.CrumbLogEntry) error {
	time.Sleep(30 * time.Millisecond)
	return s.Store.AppendCrumbs(ctx, entries)
}

// AppendsInline reports false: the wrapper adds latency or faults to the
// memory store's writes, so they go through the engine's writer goroutine.
func (s slowLog) AppendsInline() bool { return false }

func (s slowLog) Close() error { return nil }

// A client that resumes the instant it sees human:required, on another
// instance, finds the suspension in the crumb log: the continuation numbers
// its crumbs after it and its log is kept whole.
func TestAResumeTheInstantTheRunSuspendsKeepsTheLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := slowLog{memory.New()}
		start := func(turns ...modeltest.Turn) *engine.Instance {
			in, err := engine.New(engine.Config{Store: store, Agents: []*core.Agent{askAgent()}, Providers: modeltest.New(turns...).Registry("mock")})
			if err != nil {
				t.Fatal(err)
			}
			if err := in.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = in.Stop(context.Background()) })
			return in
		}
		a := start(modeltest.ToolCall("human_approve_publish", map[string]string{"url": "x"}))
		b := start(modeltest.Text("Published."))

		var cont []core.Crumb
		for c, err := range a.Run(context.Background(), "publisher", "go", core.RunOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			if hr, ok := c.(*core.HumanRequired); ok {
				// Resume on the other instance before this stream has ended.
				cont, err = collect(b.Resume(context.Background(), hr.CheckpointID, okAnswer))
				if err != nil {
					t.Fatalf("resume: %v", err)
				}
				if cont[0].Base().Seq != hr.Seq+1 {
					t.Errorf("the continuation starts at seq %d, want %d (after human:required)", cont[0].Base().Seq, hr.Seq+1)
				}
			}
		}
		if len(cont) == 0 {
			t.Fatal("the run did not suspend")
		}
		entries, err := store.GetCrumbs(context.Background(), cont[0].Base().RunID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for i, e := range entries {
			types = append(types, e.Type)
			if e.Seq != int64(i+1) {
				t.Errorf("entry %d has seq %d", i, e.Seq)
			}
		}
		want := []string{"agent:run:start", "human:required", "human:resumed", "text:delta", "agent:run:end"}
		if !slices.Equal(types, want) {
			t.Errorf("the run's log %v, want %v", types, want)
		}
	})
}
