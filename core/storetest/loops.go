package storetest

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/breadai/bread/core"
)

func loopCases() []testCase {
	return []testCase{
		{name: "create and read back", needs: needsLoops, run: testLoopRoundTrip},
		{name: "UpdateLoop patches only non-zero fields", needs: needsLoops, run: testLoopPatch},
		{name: "GetLoop returns iterations in index order", needs: needsLoops, run: testLoopIterations},
		{name: "unknown ids are ErrLoopNotFound", needs: needsLoops, run: testLoopUnknown},
		{name: "ListLoops filters and is oldest first", needs: needsLoops, run: testListLoops},
	}
}

func testLoopRoundTrip(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "s"})
	l := loop("loop-1", "s", baseTime)
	noErr(t, capability[core.LoopStore](t, s).CreateLoop(t.Context(), l), "CreateLoop")
	got, err := capability[core.LoopStore](t, s).GetLoop(t.Context(), "loop-1")
	noErr(t, err, "GetLoop")
	assertJSONEqual(t, "GetLoop loop", l, got.Loop)
	equal(t, "iterations of a new loop", 0, len(got.Iterations))
}

func testLoopPatch(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "s"})
	want := loop("loop-1", "s", baseTime)
	noErr(t, capability[core.LoopStore](t, s).CreateLoop(t.Context(), want), "CreateLoop")
	steps := []struct {
		name  string
		patch core.LoopUpdate
		apply func(*core.LoopRecord)
	}{
		{"empty patch", core.LoopUpdate{}, func(*core.LoopRecord) {}},
		{"iterations", core.LoopUpdate{Iterations: 2}, func(l *core.LoopRecord) { l.Iterations = 2 }},
		{"status", core.LoopUpdate{Status: core.LoopCompleted}, func(l *core.LoopRecord) { l.Status = core.LoopCompleted }},
		{"result", core.LoopUpdate{Result: json.RawMessage(bigPayload)}, func(l *core.LoopRecord) { l.Result = json.RawMessage(bigPayload) }},
		{"completedAt", core.LoopUpdate{CompletedAt: baseTime + 99}, func(l *core.LoopRecord) { l.CompletedAt = baseTime + 99 }},
		{"every field", core.LoopUpdate{Status: core.LoopExhausted, Iterations: 3, Result: json.RawMessage(`"done"`), CompletedAt: baseTime + 100},
			func(l *core.LoopRecord) {
				l.Status, l.Iterations, l.Result, l.CompletedAt = core.LoopExhausted, 3, json.RawMessage(`"done"`), baseTime+100
			}},
	}
	for _, st := range steps {
		noErr(t, capability[core.LoopStore](t, s).UpdateLoop(t.Context(), "loop-1", st.patch), "UpdateLoop(%s)", st.name)
		st.apply(&want)
		got, err := capability[core.LoopStore](t, s).GetLoop(t.Context(), "loop-1")
		noErr(t, err, "GetLoop after %s", st.name)
		assertJSONEqual(t, "loop after patching "+st.name, want, got.Loop)
	}
}

func testLoopIterations(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "s"})
	noErr(t, capability[core.LoopStore](t, s).CreateLoop(t.Context(), loop("loop-1", "s", baseTime)), "CreateLoop")
	noErr(t, capability[core.LoopStore](t, s).CreateLoop(t.Context(), loop("loop-2", "s", baseTime)), "CreateLoop")
	iteration := func(loopID string, index int) core.LoopIteration {
		return core.LoopIteration{
			ID:          fmt.Sprintf("%s-it-%d", loopID, index),
			LoopID:      loopID,
			Index:       index,
			Input:       json.RawMessage(fmt.Sprintf(`{"i":%d}`, index)),
			Output:      json.RawMessage(bigPayload),
			StartedAt:   baseTime + int64(index),
			CompletedAt: baseTime + int64(index) + 1,
		}
	}
	want := []core.LoopIteration{iteration("loop-1", 1), iteration("loop-1", 2), iteration("loop-1", 3)}
	for _, i := range []int{2, 3, 1} { // added out of order
		noErr(t, capability[core.LoopStore](t, s).AddLoopIteration(t.Context(), want[i-1]), "AddLoopIteration(%d)", i)
	}
	noErr(t, capability[core.LoopStore](t, s).AddLoopIteration(t.Context(), iteration("loop-2", 1)), "AddLoopIteration(loop-2)")
	got, err := capability[core.LoopStore](t, s).GetLoop(t.Context(), "loop-1")
	noErr(t, err, "GetLoop")
	if len(got.Iterations) != len(want) {
		t.Fatalf("iterations: want %d, got %d", len(want), len(got.Iterations))
	}
	for i := range want {
		equal(t, fmt.Sprintf("iteration %d index", i), want[i].Index, got.Iterations[i].Index)
		assertJSONEqual(t, fmt.Sprintf("iteration %d", i), want[i], got.Iterations[i])
	}
}

func testLoopUnknown(t *testing.T, s core.BreadStore) {
	_, err := capability[core.LoopStore](t, s).GetLoop(t.Context(), "no-such-loop")
	isErr(t, err, core.ErrLoopNotFound, "GetLoop of an unknown id")
	err = capability[core.LoopStore](t, s).UpdateLoop(t.Context(), "no-such-loop", core.LoopUpdate{Status: core.LoopFailed})
	isErr(t, err, core.ErrLoopNotFound, "UpdateLoop of an unknown id")
	_, err = capability[core.LoopStore](t, s).GetLoop(t.Context(), "no-such-loop")
	isErr(t, err, core.ErrLoopNotFound, "UpdateLoop must not create the loop")
}

func testListLoops(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "s1"})
	createSession(t, s, core.NewSession{ID: "s2"})
	mk := func(id, session, agent string, status core.LoopStatus, at int64) {
		l := loop(id, session, baseTime+at)
		l.AgentID, l.Status = agent, status
		noErr(t, capability[core.LoopStore](t, s).CreateLoop(t.Context(), l), "CreateLoop(%s)", id)
	}
	// Created out of start order, so insertion order cannot pass for it.
	mk("l3", "s1", "a", core.LoopRunning, 30)
	mk("l1", "s1", "a", core.LoopRunning, 10)
	mk("l2", "s1", "b", core.LoopCompleted, 20)
	mk("l5", "s2", "a", core.LoopFailed, 50)
	mk("l4", "s2", "b", core.LoopRunning, 40)
	cases := []struct {
		filter core.LoopFilter
		want   []string
	}{
		{core.LoopFilter{}, []string{"l1", "l2", "l3", "l4", "l5"}},
		{core.LoopFilter{SessionID: "s1"}, []string{"l1", "l2", "l3"}},
		{core.LoopFilter{AgentID: "a"}, []string{"l1", "l3", "l5"}},
		{core.LoopFilter{Status: core.LoopRunning}, []string{"l1", "l3", "l4"}},
		{core.LoopFilter{SessionID: "s1", Status: core.LoopRunning}, []string{"l1", "l3"}},
		{core.LoopFilter{SessionID: "s2", AgentID: "b", Status: core.LoopRunning}, []string{"l4"}},
		{core.LoopFilter{SessionID: "s2", AgentID: "b", Status: core.LoopFailed}, nil},
		{core.LoopFilter{SessionID: "nope"}, nil},
	}
	for _, c := range cases {
		got, err := capability[core.LoopStore](t, s).ListLoops(t.Context(), c.filter)
		noErr(t, err, "ListLoops(%+v)", c.filter)
		equalList(t, fmt.Sprintf("ListLoops(%+v)", c.filter), c.want, ids(got, loopID))
	}
}
