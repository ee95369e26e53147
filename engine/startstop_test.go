package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/engine"
)

// blockingPlugin's Init signals reached, then waits: for its context to
// end, or (ignoreCtx) for release alone.
type blockingPlugin struct {
	lifecyclePlugin
	reached   chan struct{}
	release   chan struct{}
	ignoreCtx bool
}

func (p *blockingPlugin) Init(ctx context.Context, _ core.Runtime) error {
	p.log.add("init:" + p.name)
	close(p.reached)
	if p.ignoreCtx {
		<-p.release
		return nil
	}
	<-ctx.Done()
	return context.Cause(ctx)
}

func newLifecycleInstance(t *testing.T, tr *tracer, plugins ...core.BreadPlugin) *engine.Instance {
	t.Helper()
	in, err := engine.New(engine.Config{Store: migratingStore{memory.New(), tr}, Agents: []*core.Agent{textAgent("a")}, Plugins: plugins})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func wantStopped(t *testing.T, in *engine.Instance, err error) {
	t.Helper()
	if !errors.Is(err, engine.ErrStopped) {
		t.Fatalf("Start answered %v, want ErrStopped", err)
	}
	if in.Accepting() {
		t.Fatal("a stopped Instance accepts runs")
	}
	_, rerr := collect(in.Run(context.Background(), "a", "x", core.RunOptions{}))
	wantCode(t, rerr, core.CodeInstanceStopping)
}

// TestStartAfterStop: Start on a stopped Instance, whether it ran before or
// not, is ErrStopped and touches nothing: no migration, no plugin, no run.
func TestStartAfterStop(t *testing.T) {
	t.Run("never started", func(t *testing.T) {
		tr := &tracer{}
		in := newLifecycleInstance(t, tr, &lifecyclePlugin{name: "p", log: tr})
		if err := in.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		before := tr.String()
		wantStopped(t, in, in.Start(context.Background()))
		if tr.String() != before {
			t.Errorf("Start after Stop did %q", strings.TrimPrefix(tr.String(), before))
		}
	})
	t.Run("started", func(t *testing.T) {
		tr := &tracer{}
		in := newLifecycleInstance(t, tr, &lifecyclePlugin{name: "p", log: tr})
		if err := in.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := in.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		wantStopped(t, in, in.Start(context.Background()))
		if err := in.Stop(context.Background()); err != nil {
			t.Fatalf("a second Stop: %v", err)
		}
		if tr.String() != "migrate init:p close:p store-close" {
			t.Errorf("lifecycle %q", tr)
		}
	})
}

// TestStopDuringStart: Stop cancels a Start in progress and waits for it;
// what Start brought up goes down once, and the Instance never accepts.
func TestStopDuringStart(t *testing.T) {
	tr := &tracer{}
	blocked := &blockingPlugin{lifecyclePlugin: lifecyclePlugin{name: "b", log: tr}, reached: make(chan struct{})}
	in := newLifecycleInstance(t, tr, &lifecyclePlugin{name: "a", log: tr}, blocked, &lifecyclePlugin{name: "c", log: tr})
	started := make(chan error, 1)
	go func() { started <- in.Start(context.Background()) }()
	<-blocked.reached
	if err := in.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	err := <-started // Stop returned after Start did
	wantStopped(t, in, err)
	if !errors.Is(err, engine.ErrStopped) {
		t.Errorf("the cause of Start's error: %v", err)
	}
	if tr.String() != "migrate init:a init:b close:a store-close" {
		t.Errorf("lifecycle %q", tr)
	}
}

// TestStopGivesUpOnAStuckStart: a Start step that ignores its context
// outlasts Stop's; Stop says so, and Start tears the Instance down as it
// returns.
func TestStopGivesUpOnAStuckStart(t *testing.T) {
	tr := &tracer{}
	stuck := &blockingPlugin{lifecyclePlugin: lifecyclePlugin{name: "b", log: tr}, reached: make(chan struct{}), release: make(chan struct{}), ignoreCtx: true}
	in := newLifecycleInstance(t, tr, &lifecyclePlugin{name: "a", log: tr}, stuck)
	started := make(chan error, 1)
	go func() { started <- in.Start(context.Background()) }()
	<-stuck.reached
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := in.Stop(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Stop with an ended context during a stuck Start: %v", err)
	}
	close(stuck.release)
	wantStopped(t, in, <-started)
	if tr.String() != "migrate init:a init:b close:b close:a store-close" {
		t.Errorf("lifecycle %q", tr)
	}
}

// TestStartAndStopRace: Start and Stop called together, in either order of
// arrival, leave a stopped Instance with everything closed exactly once.
func TestStartAndStopRace(t *testing.T) {
	for range 50 {
		tr := &tracer{}
		in := newLifecycleInstance(t, tr, &lifecyclePlugin{name: "a", log: tr})
		var wg sync.WaitGroup
		var startErr, stopErr error
		wg.Go(func() { startErr = in.Start(context.Background()) })
		wg.Go(func() { stopErr = in.Stop(context.Background()) })
		wg.Wait()
		if stopErr != nil {
			t.Fatalf("Stop: %v", stopErr)
		}
		if startErr != nil && !errors.Is(startErr, engine.ErrStopped) {
			t.Fatalf("Start: %v", startErr)
		}
		if in.Accepting() {
			t.Fatal("accepting after Stop")
		}
		got := tr.String()
		if strings.Count(got, "store-close") != 1 || strings.Count(got, "init:a") != strings.Count(got, "close:a") {
			t.Fatalf("lifecycle %q", got)
		}
	}
}
