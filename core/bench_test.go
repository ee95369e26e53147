package core_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/memory"
)

// BenchmarkChokePoint measures the per-crumb cost of the choke point on its
// hot path: seq, log enqueue, one listener and publish on the embedded
// transport, over the memory store. The crumb's own allocation is counted.
func BenchmarkChokePoint(b *testing.B) {
	const runLength = 500
	for _, bc := range []struct {
		name  string
		delta bool
	}{{"durable", false}, {"delta", true}} {
		b.Run(bc.name, func(b *testing.B) {
			in, err := core.New(core.Config{Store: memory.New()})
			if err != nil {
				b.Fatal(err)
			}
			var seen int
			in.On(func(context.Context, core.Crumb) { seen++ })
			ctx := context.Background()
			cp := in.NewChokePointForTest(ctx)
			base := core.CrumbBase{AgentID: "agent", SessionID: "session-1", Timestamp: 1}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				// A realistic run has hundreds of crumbs, not millions: start a
				// new run every runLength crumbs so the store's per-run log
				// stays run-sized.
				if n%runLength == 0 {
					base.RunID = "run-" + strconv.Itoa(n/runLength)
					cp.Process(ctx, &core.AgentRunStart{CrumbBase: base})
				}
				n++
				if bc.delta {
					cp.Process(ctx, &core.TextDelta{CrumbBase: base, Delta: "x"})
				} else {
					cp.Process(ctx, &core.ToolInputEnd{CrumbBase: base, ToolCallID: "call-1"})
				}
			}
			b.StopTimer()
			cp.Finish()
			if seen == 0 {
				b.Fatal("listener never called")
			}
		})
	}
}
