package storetest

import (
	"encoding/json"
	"testing"

	"github.com/breadai/bread/core"
)

// A store must neither keep references to what a caller passed in nor hand
// out references to what it keeps: a caller mutating either afterwards must
// not change the stored data. SQL stores pass trivially; in-memory ones must
// copy.

func isolationCases() []testCase {
	return []testCase{
		{name: "session tags", run: testIsolationTags},
		{name: "message content", run: testIsolationMessages},
		{name: "checkpoints", run: testIsolationCheckpoints},
		{name: "loops", needs: needsLoops, run: testIsolationLoops},
		{name: "task runs", needs: needsTaskRuns, run: testIsolationTaskRuns},
		{name: "crumb-log entries", needs: needsCrumbLog, run: testIsolationCrumbs},
		{name: "knowledge data", needs: needsKnowledge, run: testIsolationKnowledge},
	}
}

// scribble overwrites b in place.
func scribble(b []byte) {
	for i := range b {
		b[i] = 'x'
	}
}

func testIsolationTags(t *testing.T, s core.BreadStore) {
	tags := map[string]string{"env": "prod"}
	sess := createSession(t, s, core.NewSession{ID: "s", Tags: tags})
	tags["env"], tags["added"] = "changed", "x"
	sess.Tags["env"] = "mutated"
	got, err := s.GetSession(t.Context(), "s")
	noErr(t, err, "GetSession")
	assertJSONEqual(t, "tags after the caller changed its maps", map[string]string{"env": "prod"}, got.Tags)
	got.Tags["env"] = "mutated again"
	list, err := s.ListSessions(t.Context(), core.SessionFilter{Tags: map[string]string{"env": "prod"}})
	noErr(t, err, "ListSessions")
	if len(list) != 1 {
		t.Fatalf("ListSessions(env=prod): want 1, got %d", len(list))
	}
	list[0].Tags["env"] = "mutated from a list"
	got, err = s.GetSession(t.Context(), "s")
	noErr(t, err, "GetSession")
	assertJSONEqual(t, "tags after the caller changed returned maps", map[string]string{"env": "prod"}, got.Tags)
}

func testIsolationMessages(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "s"})
	const first, second = `{"text":"first"}`, `{"text":"second"}`
	m1 := message(core.RoleUser, first, baseTime)
	m2 := message(core.RoleAssistant, second, baseTime)
	noErr(t, s.AddMessage(t.Context(), "s", m1), "AddMessage")
	msgs := []core.SessionMessage{m2}
	noErr(t, s.SuspendRun(t.Context(), "s", msgs, checkpoint("cp", "s", baseTime)), "SuspendRun")
	scribble(m1.Content)
	scribble(m2.Content)

	check := func(when string) []core.SessionMessage {
		got, err := s.GetMessages(t.Context(), "s")
		noErr(t, err, "GetMessages")
		if len(got) != 2 {
			t.Fatalf("GetMessages %s: want 2, got %d", when, len(got))
		}
		assertCompactEqual(t, "first message "+when, []byte(first), got[0].Content)
		assertCompactEqual(t, "second message "+when, []byte(second), got[1].Content)
		return got
	}
	got := check("after the caller changed its content")
	scribble(got[0].Content)
	got[1].Content = append(got[1].Content[:0], `"replaced"`...)
	got[0].Role = core.RoleSystem
	check("after the caller changed returned content")
}

func testIsolationCheckpoints(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "s"})
	want := fullCheckpoint("cp", "s")
	want.Pending = []core.PendingDelegation{{ToolCallID: "c1", ChildCheckpointID: "cp-c1", SubAgentID: "r"}}
	mutate := func(cp core.CheckpointRecord) {
		scribble(cp.Schema)
		cp.Pending[0].SubAgentID = "mutated"
		p := cp.Parent
		p.RemainingSteps[0].AgentID = "mutated"
		p.RemainingSteps[1].Steps[0].AgentID = "mutated"
		p.RemainingSteps[2].Routes["yes"] = "mutated"
		scribble(p.Map.SettledOutputs[0])
		p.Map.RemainingItems[0] = json.RawMessage(`"mutated"`)
		p.Parallel.JoinID = "mutated"
		p.Outer.CheckpointID = "mutated"
		p.Outer.Outer.PipelineID = "mutated"
	}
	in := fullCheckpoint("cp", "s")
	in.Pending = []core.PendingDelegation{{ToolCallID: "c1", ChildCheckpointID: "cp-c1", SubAgentID: "r"}}
	noErr(t, s.SaveCheckpoint(t.Context(), in), "SaveCheckpoint")
	mutate(in)
	got, err := s.GetCheckpoint(t.Context(), "cp")
	noErr(t, err, "GetCheckpoint")
	assertJSONEqual(t, "checkpoint after the caller changed what it saved", want, got)
	mutate(got)
	list, err := s.ListCheckpoints(t.Context())
	noErr(t, err, "ListCheckpoints")
	if len(list) != 1 {
		t.Fatalf("ListCheckpoints: want 1, got %d", len(list))
	}
	assertJSONEqual(t, "listed checkpoint after the caller changed a returned one", want, list[0])
	mutate(list[0])
	claimed, err := s.DeleteCheckpoint(t.Context(), "cp")
	noErr(t, err, "DeleteCheckpoint")
	assertJSONEqual(t, "claimed checkpoint after the caller changed listed ones", want, claimed)
}

func testIsolationLoops(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "s"})
	want := loop("loop", "s", baseTime)
	want.Result = json.RawMessage(`{"r":1}`)
	in := loop("loop", "s", baseTime)
	in.Result = json.RawMessage(`{"r":1}`)
	noErr(t, capability[core.LoopStore](t, s).CreateLoop(t.Context(), in), "CreateLoop")
	in.Pool[0], in.Pipeline[0] = "mutated", "mutated"
	scribble(in.Result)
	it := core.LoopIteration{ID: "it", LoopID: "loop", Index: 1, Input: json.RawMessage(`{"in":1}`), Output: json.RawMessage(`{"out":2}`)}
	wantIt := it
	wantIt.Input, wantIt.Output = json.RawMessage(`{"in":1}`), json.RawMessage(`{"out":2}`)
	noErr(t, capability[core.LoopStore](t, s).AddLoopIteration(t.Context(), it), "AddLoopIteration")
	scribble(it.Input)
	scribble(it.Output)
	result := json.RawMessage(`"done"`)
	noErr(t, capability[core.LoopStore](t, s).UpdateLoop(t.Context(), "loop", core.LoopUpdate{Result: result}), "UpdateLoop")
	scribble(result)
	want.Result = json.RawMessage(`"done"`)

	check := func(when string) core.LoopDetail {
		got, err := capability[core.LoopStore](t, s).GetLoop(t.Context(), "loop")
		noErr(t, err, "GetLoop")
		assertJSONEqual(t, "loop "+when, want, got.Loop)
		if len(got.Iterations) != 1 {
			t.Fatalf("iterations %s: want 1, got %d", when, len(got.Iterations))
		}
		assertJSONEqual(t, "iteration "+when, wantIt, got.Iterations[0])
		return got
	}
	got := check("after the caller changed what it wrote")
	got.Loop.Pool[0], got.Loop.Pipeline[0] = "mutated", "mutated"
	scribble(got.Loop.Result)
	scribble(got.Iterations[0].Input)
	check("after the caller changed a returned loop")
	list, err := capability[core.LoopStore](t, s).ListLoops(t.Context(), core.LoopFilter{})
	noErr(t, err, "ListLoops")
	list[0].Pool[1] = "mutated"
	scribble(list[0].Result)
	check("after the caller changed a listed loop")
}

func testIsolationTaskRuns(t *testing.T, s core.BreadStore) {
	tr := capability[core.TaskRunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	want := taskRun("tr", "extract", baseTime)
	want.Output, want.Usage = json.RawMessage(`{"o":1}`), &core.Usage{TotalTokens: 9}
	in := taskRun("tr", "extract", baseTime)
	noErr(t, tr.CreateTaskRun(t.Context(), in), "CreateTaskRun")
	scribble(in.Input)
	upd := core.TaskRunUpdate{Output: json.RawMessage(`{"o":1}`), Usage: &core.Usage{TotalTokens: 9}}
	noErr(t, tr.FinishTaskRun(t.Context(), "tr", upd), "FinishTaskRun")
	scribble(upd.Output)
	upd.Usage.TotalTokens = 1000
	got, err := tr.GetTaskRun(t.Context(), "tr")
	noErr(t, err, "GetTaskRun")
	assertJSONEqual(t, "task run after the caller changed what it wrote", want, got)
	scribble(got.Input)
	got.Usage.TotalTokens = 2000
	list, err := tr.ListTaskRuns(t.Context(), core.TaskRunFilter{})
	noErr(t, err, "ListTaskRuns")
	if len(list) != 1 {
		t.Fatalf("ListTaskRuns: want 1, got %d", len(list))
	}
	assertJSONEqual(t, "listed task run after the caller changed a returned one", want, list[0])
	scribble(list[0].Output)
	got, err = tr.GetTaskRun(t.Context(), "tr")
	noErr(t, err, "GetTaskRun")
	assertJSONEqual(t, "task run after the caller changed a listed one", want, got)
}

func testIsolationCrumbs(t *testing.T, s core.BreadStore) {
	cl := capability[core.CrumbLog](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	in := textEntries("run", "s", 1, 2)
	noErr(t, cl.AppendCrumbs(t.Context(), in), "AppendCrumbs")
	in[0].Seq, in[0].RunID, in[1].SessionID = 99, "other", "other"
	got, err := cl.GetCrumbs(t.Context(), "run", 0, 0)
	noErr(t, err, "GetCrumbs")
	want := textEntries("run", "s", 1, 2)
	if len(got) != 2 {
		t.Fatalf("GetCrumbs: want 2, got %d", len(got))
	}
	for i := range want {
		assertEntry(t, want[i], got[i])
	}
	got[0].Seq, got[1].RunID = 42, "mutated"
	assertCrumbSeqs(t, cl, "run", []int64{1, 2})
}

func testIsolationKnowledge(t *testing.T, s core.BreadStore) {
	ks := capability[core.KnowledgeStore](t, s)
	data := map[string]any{"k": "v", "nested": map[string]any{"n": 1.0}, "list": []any{"a"}}
	want := map[string]any{"k": "v", "nested": map[string]any{"n": 1.0}, "list": []any{"a"}}
	n := addNode(t, ks, "a", "s", "node", data)
	data["k"] = "changed"
	data["nested"].(map[string]any)["n"] = 2.0
	data["list"].([]any)[0] = "changed"
	if n.Data != nil {
		n.Data["k"] = "mutated"
	}
	query := func(when string) core.KnowledgeNode {
		nodes, err := ks.QueryKnowledge(t.Context(), core.KnowledgeQuery{AgentID: "a", Query: "node"})
		noErr(t, err, "QueryKnowledge")
		if len(nodes) != 1 {
			t.Fatalf("QueryKnowledge %s: want 1, got %d", when, len(nodes))
		}
		assertJSONEqual(t, "data "+when, want, nodes[0].Data)
		return nodes[0]
	}
	got := query("after the caller changed its map")
	got.Data["k"] = "mutated"
	if nested, ok := got.Data["nested"].(map[string]any); ok {
		nested["n"] = 3.0
	}
	query("after the caller changed a returned map")
	nodes, err := ks.KnowledgeContext(t.Context(), "a", "s", 0)
	noErr(t, err, "KnowledgeContext")
	if len(nodes) == 1 {
		nodes[0].Data["k"] = "mutated via context"
	}
	query("after the caller changed a map from KnowledgeContext")
}
