package engine_test

import (
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
)

// TestAgentRunStartNamesItsParentRun: a delegated run's agent:run:start
// names the supervisor's run as its parent, through a chain of two
// delegations; a top-level run names none.
func TestAgentRunStartNamesItsParentRun(t *testing.T) {
	mid, _ := scripted("mid", modeltest.ToolCalls(delegate("m1", "leaf", "x")), modeltest.Text("mid:leaf"))
	mid.Supervisor = &core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "leaf", Visibility: core.Passthrough}}}
	top, _ := supervisorAgent(core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "mid", Visibility: core.Passthrough}}},
		modeltest.ToolCalls(delegate("t1", "mid", "x")), modeltest.Text("top:mid:leaf"))
	tb := newTestbed(t, modeltest.New(), []*core.Agent{top, mid, echoAgent("leaf", "leaf:")})
	cs, err := tb.run(t, "boss", "go", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	starts := map[string]*core.AgentRunStart{}
	for _, s := range find[*core.AgentRunStart](cs) {
		starts[s.AgentID] = s
	}
	boss, m, leaf := starts["boss"], starts["mid"], starts["leaf"]
	if boss == nil || m == nil || leaf == nil {
		t.Fatalf("the runs' starts: %+v", starts)
	}
	cases := []struct {
		name       string
		start      *core.AgentRunStart
		wantParent string
	}{
		{"the top-level run", boss, ""},
		{"the supervisor's delegation", m, boss.RunID},
		{"the delegation's delegation", leaf, m.RunID},
	}
	for _, c := range cases {
		if c.start.ParentRunID != c.wantParent {
			t.Errorf("%s (run %s): parentRunId %q, want %q", c.name, c.start.RunID, c.start.ParentRunID, c.wantParent)
		}
	}
	if m.RunID == boss.RunID || leaf.RunID == m.RunID {
		t.Errorf("a delegation has a run of its own: %+v", starts)
	}
}
