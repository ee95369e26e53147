package engine_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// TestParallelBranchesLogTheirEndsWithTheirRecords: on a store that logs
// crumbs with its run writes, each branch of a parallel step (its crumbs
// reach the stream from its own goroutine) ends with one write of its
// record and its agent:run:end, and every branch's log stays gap-free,
// in order and the same, seq for seq, as what the client got (issue 31:
// a run killed between its end record and its log's write).
func TestParallelBranchesLogTheirEndsWithTheirRecords(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &foldLog{Store: memory.New()}
		const branches = 3
		var turns []modeltest.Turn
		for range branches {
			turns = append(turns, modeltest.Text("done"))
		}
		step := core.PipelineStep{Type: core.StepAgent, AgentID: "a"}
		tb := newTestbed(t, modeltest.New(turns...), []*core.Agent{textAgent("a")}, func(c *engine.Config) {
			c.Store = store
			c.Pipelines = map[string][]core.PipelineStep{"p": {{Type: core.StepParallel, Steps: []core.PipelineStep{step, step, step}}}}
		})
		cs, err := collect(tb.in.RunPipeline(context.Background(), "p", "hi"))
		if err != nil {
			t.Fatal(err)
		}
		starts := find[*core.AgentRunStart](cs)
		if len(starts) != branches {
			t.Fatalf("%d runs started, want %d", len(starts), branches)
		}
		for _, s := range starts {
			logged := loggedTypes(t, store.Store, s.RunID)
			if !slices.Equal(logged, []string{core.TypeAgentRunStart, core.TypeTextDelta, core.TypeAgentRunEnd}) {
				t.Errorf("branch %s logged %v", s.RunID, logged)
			}
			entries, _ := store.GetCrumbs(context.Background(), s.RunID, 0, 0)
			for _, c := range cs {
				b := c.Base()
				if b.RunID != s.RunID || core.IsDelta(c.CrumbType()) || b.Seq == 0 {
					continue
				}
				if int(b.Seq) > len(entries) || entries[b.Seq-1].Type != c.CrumbType() {
					t.Errorf("branch %s: the client got %s as seq %d, the log disagrees", s.RunID, c.CrumbType(), b.Seq)
				}
			}
		}
		_, writes := store.seen()
		ends := 0
		for _, w := range writes {
			if slices.Contains(w, core.TypeAgentRunEnd) {
				ends++
			}
		}
		if ends != branches {
			t.Errorf("%d end writes carried their agent:run:end (%v), want %d", ends, writes, branches)
		}
	})
}
