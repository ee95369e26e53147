package memory_test

import (
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/storetest"
)

var allFeatures = storetest.Features{
	Runs: true, RunList: true, SessionStarters: true, MessageDelete: true, Loops: true, CrumbLog: true, InlineCrumbLog: true,
	TaskRuns: true, Knowledge: true, Documents: true, EvalRuns: true, Ping: true, ClosedErrors: true, SessionState: true, RunSubscriptions: true,
}

func newStore(tb testing.TB) core.BreadStore {
	s := memory.New()
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, allFeatures, func(t *testing.T) core.BreadStore { return newStore(t) })
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) core.BreadStore { return newStore(b) })
}
