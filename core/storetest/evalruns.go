package storetest

import (
	"testing"

	"github.com/breadai/bread/core"
)

func evalRunCases() []testCase {
	return []testCase{
		{name: "save and get, results as JSON", needs: needsEvalRuns, run: testEvalRunSaveGet},
		{name: "unknown ids are ErrEvalRunNotFound", needs: needsEvalRuns, run: testEvalRunUnknown},
		{name: "SaveEvalRun refuses what it cannot keep and keeps the first of an id", needs: needsEvalRuns, run: testEvalRunRefusals},
		{name: "ListEvalRuns filters, is newest first, pages and leaves out results", needs: needsEvalRuns, run: testListEvalRuns},
	}
}

// evalRun builds a finished eval run of agent with two cases, one failed.
func evalRun(id, agent string, createdAt int64) core.EvalRun {
	return core.EvalRun{
		ID: id, AgentID: agent, StartedBy: "apikey:ops", CreatedAt: createdAt, DurationMs: 1234,
		Passed: 1, Total: 2,
		Results: []core.EvalResult{
			{Suite: "agents/" + agent + "/evals/basic.eval.yaml", Type: "functional", Case: "greets", Passed: true,
				Output: "Hello, Ada — ünïcode and \"quotes\"", DurationMs: 400},
			{Suite: "agents/" + agent + "/evals/basic.eval.yaml", Type: "prompt-injection", Case: "holds", Passed: false,
				Problems: []string{"output contains \"secret\"", "second problem"},
				Output:   map[string]any{"answer": "the secret", "n": 3.5, "list": []any{true, nil, "x"}}, DurationMs: 834},
		},
	}
}

func testEvalRunSaveGet(t *testing.T, s core.BreadStore) {
	es := capability[core.EvalRunStore](t, s)
	want := evalRun("ev-1", "writer", baseTime)
	noErr(t, es.SaveEvalRun(t.Context(), want), "SaveEvalRun")
	got, err := es.GetEvalRun(t.Context(), "ev-1")
	noErr(t, err, "GetEvalRun")
	assertJSONEqual(t, "the saved eval run", want, got)

	// A run of no case keeps no result, and says so with an empty list.
	empty := core.EvalRun{ID: "ev-2", AgentID: "writer", CreatedAt: baseTime + 1}
	noErr(t, es.SaveEvalRun(t.Context(), empty), "SaveEvalRun of no case")
	got, err = es.GetEvalRun(t.Context(), "ev-2")
	noErr(t, err, "GetEvalRun of no case")
	assertJSONEqual(t, "an eval run of no case", empty, got)
	equal(t, "its results", 0, len(got.Results))
}

func testEvalRunUnknown(t *testing.T, s core.BreadStore) {
	es := capability[core.EvalRunStore](t, s)
	_, err := es.GetEvalRun(t.Context(), "no-such-eval")
	isErr(t, err, core.ErrEvalRunNotFound, "GetEvalRun of an unknown id")
	noErr(t, es.SaveEvalRun(t.Context(), evalRun("ev-1", "writer", baseTime)), "SaveEvalRun")
	_, err = es.GetEvalRun(t.Context(), "ev-1\x00")
	isErr(t, err, core.ErrEvalRunNotFound, "GetEvalRun of an id with a NUL")
}

func testEvalRunRefusals(t *testing.T, s core.BreadStore) {
	es := capability[core.EvalRunStore](t, s)
	for name, r := range map[string]core.EvalRun{
		"no id":    {AgentID: "writer", CreatedAt: baseTime},
		"no agent": {ID: "ev-x", CreatedAt: baseTime},
	} {
		isErr(t, es.SaveEvalRun(t.Context(), r), core.ErrValidation, "SaveEvalRun with %s", name)
	}
	first := evalRun("ev-1", "writer", baseTime)
	noErr(t, es.SaveEvalRun(t.Context(), first), "SaveEvalRun")
	again := evalRun("ev-1", "other", baseTime+5)
	again.Passed = 2
	if err := es.SaveEvalRun(t.Context(), again); err == nil {
		t.Error("SaveEvalRun of an id already saved: want an error, got nil")
	}
	got, err := es.GetEvalRun(t.Context(), "ev-1")
	noErr(t, err, "GetEvalRun")
	assertJSONEqual(t, "the first run of the id", first, got)
	list, err := es.ListEvalRuns(t.Context(), core.EvalRunFilter{})
	noErr(t, err, "ListEvalRuns")
	equal(t, "runs listed", 1, len(list))
}

func testListEvalRuns(t *testing.T, s core.BreadStore) {
	es := capability[core.EvalRunStore](t, s)
	mk := func(id, agent, by string, at int64) {
		r := evalRun(id, agent, baseTime+at)
		r.StartedBy = by
		noErr(t, es.SaveEvalRun(t.Context(), r), "SaveEvalRun(%s)", id)
	}
	// Saved out of time order, so insertion order cannot pass for it; e3
	// and e3b share a time, so the id breaks the tie.
	mk("e2", "a", "u1", 20)
	mk("e4", "b", "u2", 40)
	mk("e1", "a", "u2", 10)
	mk("e3b", "a", "", 30)
	mk("e3", "a", "u1", 30)
	evalID := func(r core.EvalRun) string { return r.ID }
	cases := []struct {
		name   string
		filter core.EvalRunFilter
		want   []string
	}{
		{"all", core.EvalRunFilter{}, []string{"e4", "e3b", "e3", "e2", "e1"}},
		{"agent", core.EvalRunFilter{AgentID: "a"}, []string{"e3b", "e3", "e2", "e1"}},
		{"starter", core.EvalRunFilter{StartedBy: "u1"}, []string{"e3", "e2"}},
		{"agent and starter", core.EvalRunFilter{AgentID: "a", StartedBy: "u2"}, []string{"e1"}},
		{"limit", core.EvalRunFilter{AgentID: "a", Limit: 2}, []string{"e3b", "e3"}},
		{"after a page", core.EvalRunFilter{AgentID: "a", After: &core.EvalRunCursor{CreatedAt: baseTime + 30, ID: "e3"}, Limit: 2}, []string{"e2", "e1"}},
		{"after the tie's first", core.EvalRunFilter{After: &core.EvalRunCursor{CreatedAt: baseTime + 30, ID: "e3b"}}, []string{"e3", "e2", "e1"}},
		{"after the last", core.EvalRunFilter{After: &core.EvalRunCursor{CreatedAt: baseTime + 10, ID: "e1"}}, nil},
		{"unknown agent", core.EvalRunFilter{AgentID: "nope"}, nil},
		{"agent with a NUL", core.EvalRunFilter{AgentID: "a\x00"}, nil},
	}
	for _, c := range cases {
		got, err := es.ListEvalRuns(t.Context(), c.filter)
		noErr(t, err, "ListEvalRuns(%s)", c.name)
		equalList(t, "ListEvalRuns("+c.name+")", c.want, ids(got, evalID))
		for _, r := range got {
			if r.Results != nil {
				t.Errorf("ListEvalRuns(%s): run %s has its results; a listing leaves them out", c.name, r.ID)
			}
		}
	}
	// Paging with cursors from the listing itself walks every run once.
	var walked []string
	var after *core.EvalRunCursor
	for range 10 {
		page, err := es.ListEvalRuns(t.Context(), core.EvalRunFilter{After: after, Limit: 2})
		noErr(t, err, "ListEvalRuns page")
		if len(page) == 0 {
			break
		}
		walked = append(walked, ids(page, evalID)...)
		after = core.EvalCursorOf(page[len(page)-1])
	}
	equalList(t, "the runs walked page by page", []string{"e4", "e3b", "e3", "e2", "e1"}, walked)
	// The summary keeps everything but the results.
	got, err := es.ListEvalRuns(t.Context(), core.EvalRunFilter{StartedBy: "u2", AgentID: "b"})
	noErr(t, err, "ListEvalRuns")
	want := evalRun("e4", "b", baseTime+40)
	want.StartedBy, want.Results = "u2", nil
	if len(got) == 1 {
		assertJSONEqual(t, "a listed run", want, got[0])
	}
}
