package engine_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// timedStore instruments the crumb log of the store it wraps, the way a
// metrics wrapper does: it implements As, hands out its own log for a
// core.CrumbLog and finds every other capability in the wrapped store.
type timedStore struct {
	core.BreadStore
	log *countedLog
}

func (s *timedStore) As(target any) bool {
	if t, ok := target.(*core.CrumbLog); ok {
		*t = s.log
		return true
	}
	return core.As(s.BreadStore, target)
}

type countedLog struct {
	core.CrumbLog
	appends atomic.Int64
}

func (l *countedLog) AppendCrumbs(ctx context.Context, es []core.CrumbLogEntry) error {
	l.appends.Add(1)
	return l.CrumbLog.AppendCrumbs(ctx, es)
}

// TestAStoreWrapperKeepsEveryCapability: behind a wrapper that implements
// As, the engine finds every capability of the store (a loop agent is
// accepted, runs are recorded) and writes the crumb log through the
// wrapper's own log.
func TestAStoreWrapperKeepsEveryCapability(t *testing.T) {
	m := memory.New()
	w := &timedStore{BreadStore: m, log: &countedLog{CrumbLog: m}}
	in, err := engine.New(engine.Config{
		Store:     w,
		Providers: modeltest.New(modeltest.Text("hi")).Registry("scripted"),
		Agents: []*core.Agent{
			{ID: "a", Model: core.ModelRef{Provider: "scripted", Model: "m"}},
			{ID: "looper", Model: core.ModelRef{Provider: "scripted", Model: "m"}, Loop: &core.LoopConfig{Pool: []string{"a"}, MaxIterations: 2}},
		},
	})
	if err != nil {
		t.Fatalf("engine.New with a wrapped store: %v", err)
	}
	if got, want := in.Storage().Capabilities(), core.NewStorage(memory.New()).Capabilities()&^core.StoreInlineCrumbLog; got != want {
		t.Errorf("capabilities through the wrapper %v, want %v", got, want)
	}
	if err := in.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer in.Stop(context.Background())
	out, err := in.RunSync(t.Context(), "a", "go", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := m.GetRun(t.Context(), out.RunID); err != nil || rec.Status != core.RunCompleted {
		t.Errorf("the run's record in the wrapped store: %+v, %v", rec, err)
	}
	if w.log.appends.Load() == 0 {
		t.Error("the crumb log was not written through the wrapper's log")
	}
}
