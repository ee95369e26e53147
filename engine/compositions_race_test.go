package engine_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// resumeAll resumes every checkpoint at the same moment and returns each
// continuation's crumbs.
func resumeAll(t *testing.T, in *engine.Instance, ids []string) [][]core.Crumb {
	t.Helper()
	out := make([][]core.Crumb, len(ids))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			<-start
			cs, err := collect(in.Resume(context.Background(), id, okAnswer))
			if err != nil {
				t.Errorf("resume %s: %v", id, err)
			}
			out[i] = cs
		})
	}
	close(start)
	wg.Wait()
	return out
}

// checkpointIDs returns the checkpoints of the human:required crumbs in cs,
// which must be n.
func checkpointIDs(t *testing.T, cs []core.Crumb, n int) []string {
	t.Helper()
	var ids []string
	for _, hr := range find[*core.HumanRequired](cs) {
		ids = append(ids, hr.CheckpointID)
	}
	if len(ids) != n {
		t.Fatalf("%d suspensions, want %d: %v", len(ids), n, types(cs))
	}
	return ids
}

// TestParallelBranchesResumedTogetherContinueOnce: two suspended branches
// resumed at the same moment continue the pipeline exactly once, with both
// branches' outputs (no null for a sibling that finished concurrently).
func TestParallelBranchesResumedTogetherContinueOnce(t *testing.T) {
	for round := range 25 {
		tb := newTestbed(t, modeltest.New(), []*core.Agent{askingAgent("left", "L"), askingAgent("right", "R"), echoAgent("merge", "")}, func(c *engine.Config) {
			c.Pipelines = map[string][]core.PipelineStep{"p": {
				{Type: core.StepParallel, Steps: []core.PipelineStep{{Type: core.StepAgent, AgentID: "left"}, {Type: core.StepAgent, AgentID: "right"}}},
				{Type: core.StepAgent, AgentID: "merge"},
			}}
		})
		cs, err := collect(tb.in.RunPipeline(context.Background(), "p", "x"))
		if err != nil {
			t.Fatal(err)
		}
		ids := checkpointIDs(t, cs, 2)
		var merges []string
		for _, cont := range resumeAll(t, tb.in, ids) {
			for _, tr := range stepTrace(cont) {
				if strings.HasPrefix(tr, "end:parallel=") {
					merges = append(merges, tr)
				}
			}
		}
		if !slices.Equal(merges, []string{`end:parallel=["L","R"]`}) {
			t.Fatalf("round %d: the parallel step must end once with both outputs, got %q", round, merges)
		}
	}
}

// TestSupervisorChildrenFinishingTogetherContinueItOnce: two delegations
// resumed at the same moment continue the supervisor exactly once, and it
// sees both answers.
func TestSupervisorChildrenFinishingTogetherContinueItOnce(t *testing.T) {
	for round := range 25 {
		boss, bossModel := supervisorAgent(core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "a"}, {AgentID: "b"}}},
			modeltest.ToolCalls(delegate("da", "a", "1"), delegate("db", "b", "2")), modeltest.Text("both done"))
		tb := newTestbed(t, modeltest.New(), []*core.Agent{boss, askingAgent("a", "A"), askingAgent("b", "B")})
		cs, err := tb.run(t, "boss", "go", core.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids := checkpointIDs(t, cs, 2)
		ends := 0
		for _, cont := range resumeAll(t, tb.in, ids) {
			for _, e := range find[*core.AgentRunEnd](cont) {
				if e.AgentID == "boss" {
					ends++
				}
			}
		}
		if ends != 1 || bossModel.Calls() != 2 {
			t.Fatalf("round %d: the supervisor ended %d times after %d model calls, want once after 2", round, ends, bossModel.Calls())
		}
		// Its second call saw both delegations answered.
		last := bossModel.Requests()[1].Messages
		answered := 0
		for _, m := range last {
			for _, p := range m.Parts {
				if p.Type == core.PartToolResult && p.ToolName == "core_delegate" {
					answered++
				}
			}
		}
		if answered != 2 {
			t.Fatalf("round %d: the continued supervisor saw %d delegate answers, want 2", round, answered)
		}
	}
}
