package engine

import (
	"runtime"
	"testing"
	"weak"

	"github.com/breadai/bread/core"
)

// TestEndUsageKeepsNothingOfTheRun holds that the usage an agent:run:end
// carries does not point into its run: the memory store keeps the crumb as
// long as the run's log, and a pointer into the run (its one-call array)
// kept the run's whole state alive with it, its request and contexts
// included.
func TestEndUsageKeepsNothingOfTheRun(t *testing.T) {
	for _, calls := range []int{1, 2, 3} {
		r := &run{}
		var want core.Usage
		for i := range calls {
			u := core.Usage{InputTokens: int64(10 + i), OutputTokens: int64(1 + i)}
			if r.calls == nil {
				r.calls = r.oneCall[:0]
			}
			r.calls = append(r.calls, u)
			want = want.Add(u)
		}
		r.usage = want
		gone := weak.Make(r)
		usage, modelCalls := r.endUsage()
		r = nil
		runtime.GC()
		if gone.Value() != nil {
			t.Errorf("%d calls: the run is still reachable from its end's usage", calls)
		}
		if *usage != want || len(modelCalls) != calls || cap(modelCalls) != calls {
			t.Errorf("%d calls: usage %+v, calls %+v (cap %d), want %+v over %d", calls, *usage, modelCalls, cap(modelCalls), want, calls)
		}
		for i, u := range modelCalls {
			if u != (core.Usage{InputTokens: int64(10 + i), OutputTokens: int64(1 + i)}) {
				t.Errorf("%d calls: call %d is %+v", calls, i, u)
			}
		}
	}
}
