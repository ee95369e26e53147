package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

type fenceTestKey struct{}

// A fenced context is its parent in everything but the fence: values,
// deadline, cancellation (also of contexts derived from it), and the
// innermost fence wins, a zero one removing it.
func TestRunFenceContextIsItsParentButTheFence(t *testing.T) {
	deadline := time.Now().Add(time.Hour)
	parent, cancel := context.WithDeadline(context.WithValue(context.Background(), fenceTestKey{}, "v"), deadline)
	defer cancel()
	f := core.RunFence{RunID: "r1", Token: "t1"}
	ctx := core.WithRunFence(parent, f)

	if got, ok := core.RunFenceFrom(ctx); !ok || got != f {
		t.Errorf("RunFenceFrom = %+v, %v; want %+v", got, ok, f)
	}
	if _, ok := core.RunFenceFrom(parent); ok {
		t.Error("the parent carries a fence")
	}
	if got := ctx.Value(fenceTestKey{}); got != "v" {
		t.Errorf("a parent's value = %v", got)
	}
	if d, ok := ctx.Deadline(); !ok || !d.Equal(deadline) {
		t.Errorf("Deadline = %v, %v", d, ok)
	}
	inner := core.RunFence{RunID: "r2", Token: "t2"}
	if got, ok := core.RunFenceFrom(core.WithRunFence(ctx, inner)); !ok || got != inner {
		t.Errorf("nested: RunFenceFrom = %+v, %v; want %+v", got, ok, inner)
	}
	if _, ok := core.RunFenceFrom(core.WithRunFence(ctx, core.RunFence{})); ok {
		t.Error("a zero fence did not remove it")
	}
	if got, ok := core.RunFenceFrom(context.WithoutCancel(ctx)); !ok || got != f {
		t.Errorf("under WithoutCancel: RunFenceFrom = %+v, %v", got, ok)
	}

	child, cancelChild := context.WithCancel(ctx)
	defer cancelChild()
	cancel()
	// Cancelled by cancel itself, as a child of a context.WithValue is: the
	// context package sees through the fenced one to the cancelCtx above
	// it, rather than watching it from a goroutine of its own.
	if !errors.Is(ctx.Err(), context.Canceled) || !errors.Is(child.Err(), context.Canceled) {
		t.Errorf("Err = %v, %v", ctx.Err(), child.Err())
	}
	if got, ok := core.RunFenceFrom(child); !ok || got != f {
		t.Errorf("derived: RunFenceFrom = %+v, %v", got, ok)
	}
}

// BenchmarkWithRunFence: a run's fenced context made and its fence read
// back, as a store does on each fenced write.
func BenchmarkWithRunFence(b *testing.B) {
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	ids := []string{"r1", "r2"}
	kept := make(chan context.Context, 1) // the context is kept, as a run keeps it
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		kept <- core.WithRunFence(parent, core.RunFence{RunID: ids[i%2], Token: ids[(i+1)%2]})
		if _, ok := core.RunFenceFrom(<-kept); !ok {
			b.Fatal("no fence")
		}
	}
}
