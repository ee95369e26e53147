package engine_test

import (
	"context"
	"runtime"
	"testing"
	"time"
	"unsafe"
	"weak"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
)

// marker is a value only the caller's context holds.
type marker struct{ _ [64]byte }

type markerKey struct{}

// What a store keeps of a finished run (its crumbs, its record, its
// session) must not keep the caller's context alive: the memory store
// keeps them as values for ten thousand runs, and a crumb pointing into
// the run (agent:run:end's usage shared the run's one-call array) kept
// every run's contexts, and with them the HTTP request, its headers and
// the engine's state for the run, about 6 KB a run.
func TestAStoredRunKeepsNothingOfItsCaller(t *testing.T) {
	tb := newTestbed(t, modeltest.New(modeltest.Text("Hello.")), []*core.Agent{textAgent("a")})
	m := &marker{}
	gone := weak.Make(m)
	ctx := context.WithValue(context.Background(), markerKey{}, m)
	cs, err := collect(tb.in.Run(ctx, "a", "hi", core.RunOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	end := last[*core.AgentRunEnd](t, cs)
	if end.Usage == nil || len(end.ModelCalls) != 1 {
		t.Fatalf("the run's end carries usage %v, calls %v: the test needs a run that reports usage", end.Usage, end.ModelCalls)
	}
	runID := end.RunID
	m, ctx, cs, end = nil, nil, nil, nil
	// The run's own goroutines may still be on their way out when the
	// iterator returns (the last crumb is sent before they return): collect
	// until they are gone. A value the store keeps is never collected, so
	// the deadline fails the test only on a real leak.
	deadline := time.Now().Add(10 * time.Second)
	for runtime.GC(); gone.Value() != nil && time.Now().Before(deadline); runtime.GC() {
		time.Sleep(10 * time.Millisecond)
	}
	if gone.Value() != nil {
		t.Error("the caller's context is still reachable once the run is stored")
	}
	logged, err := tb.store.GetCrumbs(context.Background(), runID, 0, 0)
	if err != nil || len(logged) == 0 || logged[len(logged)-1].Type != core.TypeAgentRunEnd {
		t.Fatalf("the store no longer holds the run's log (%d entries, %v): the test proves nothing", len(logged), err)
	}
}

// TestAnEndOfOneCallHoldsItsUsage holds that a run of one model call
// allocates its agent:run:end and the usage it carries together: the
// memory store keeps the end for as long as the run's log, so the
// collector marks one object for them on every cycle, for every run kept.
func TestAnEndOfOneCallHoldsItsUsage(t *testing.T) {
	tb := newTestbed(t, modeltest.New(modeltest.Text("Hello.")), []*core.Agent{textAgent("a")})
	cs, err := collect(tb.in.Run(t.Context(), "a", "hi", core.RunOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	end := last[*core.AgentRunEnd](t, cs)
	if end.Usage == nil || len(end.ModelCalls) != 1 {
		t.Fatalf("the run's end carries usage %v, calls %v: the test needs a run of one call that reports usage", end.Usage, end.ModelCalls)
	}
	from := uintptr(unsafe.Pointer(end))
	to := from + unsafe.Sizeof(*end) + 2*unsafe.Sizeof(core.Usage{})
	for name, p := range map[string]uintptr{"Usage": uintptr(unsafe.Pointer(end.Usage)), "ModelCalls[0]": uintptr(unsafe.Pointer(&end.ModelCalls[0]))} {
		if p < from || p >= to {
			t.Errorf("the end's %s is in an allocation of its own (%#x, the end at %#x)", name, p, from)
		}
	}
}
