package engine

import (
	"context"

	"github.com/breadai/bread/core"
)

// ChokePointForTest exposes one stream's choke point to the external tests
// (benchmarks drive it directly, with the memory store).
type ChokePointForTest struct{ cp *chokePoint }

func (in *Instance) NewChokePointForTest(ctx context.Context) ChokePointForTest {
	return ChokePointForTest{cp: in.newChokePoint(ctx)}
}

func (c ChokePointForTest) Process(ctx context.Context, cr core.Crumb) { c.cp.process(ctx, cr) }
func (c ChokePointForTest) Finish()                                    { c.cp.finish() }
