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

// TestDelegatedRunsLogTheirEndsWithTheirRecords is the same for runs a
// supervisor delegates to, two at once (their crumbs pass their delegate
// calls' doors to the supervisor's goroutine), under each visibility: a
// run's log holds what the supervisor's stream shows of it, at the seqs
// shown, its end in its end write's commit.
func TestDelegatedRunsLogTheirEndsWithTheirRecords(t *testing.T) {
	for _, tc := range []struct {
		vis core.Visibility
		// logged is what each delegated run's log holds; ends counts the
		// end writes that carried an agent:run:end or subagent:run:end
		// (the supervisor's own included).
		logged []string
		ends   int
	}{
		{vis: core.Passthrough, logged: []string{core.TypeAgentRunStart, core.TypeTextDelta, core.TypeAgentRunEnd}, ends: 3},
		{vis: core.Mediate, logged: []string{core.TypeSubagentRunStart, core.TypeSubagentRunEnd}, ends: 3},
		{vis: core.Hidden, logged: []string{}, ends: 1},
	} {
		t.Run(string(tc.vis), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := &foldLog{Store: memory.New()}
				boss, _ := scripted("boss", modeltest.ToolCalls(delegate("d1", "worker", "one"), delegate("d2", "worker", "two")), modeltest.Text("composed"))
				boss.Supervisor = &core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "worker", Visibility: tc.vis}}}
				tb := newTestbed(t, modeltest.New(), []*core.Agent{boss, echoAgent("worker", "done:")}, func(c *engine.Config) { c.Store = store })
				cs, err := tb.run(t, "boss", "go", core.RunOptions{})
				if err != nil {
					t.Fatal(err)
				}
				shown := map[string][]core.Crumb{} // what the stream showed, per run
				for _, c := range cs {
					if b := c.Base(); b.AgentID == "worker" {
						shown[b.RunID] = append(shown[b.RunID], c)
					}
				}
				if tc.vis != core.Hidden && len(shown) != 2 {
					t.Fatalf("%d delegated runs shown, want 2", len(shown))
				}
				for id, crumbs := range shown {
					logged := loggedTypes(t, store.Store, id)
					if !slices.Equal(logged, tc.logged) {
						t.Errorf("delegated run %s logged %v, want %v", id, logged, tc.logged)
						continue
					}
					for _, c := range crumbs {
						// A delta shows its window's seq before it is logged.
						if seq := c.Base().Seq; !core.IsDelta(c.CrumbType()) && (seq < 1 || int(seq) > len(logged) || logged[seq-1] != c.CrumbType()) {
							t.Errorf("delegated run %s showed %s at seq %d, its log holds %v", id, c.CrumbType(), seq, logged)
						}
					}
				}
				_, writes := store.seen()
				ends := 0
				for _, w := range writes {
					ends += count(w, core.TypeAgentRunEnd) + count(w, core.TypeSubagentRunEnd)
				}
				if ends != tc.ends {
					t.Errorf("%d end writes carried their end (%v), want %d", ends, writes, tc.ends)
				}
			})
		})
	}
}
