package storetest

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/breadai/bread/core"
)

func taskRunCases() []testCase {
	return []testCase{
		{name: "create, finish and get", needs: needsTaskRuns, run: testTaskRunLifecycle},
		{name: "FinishTaskRun patches only non-zero fields", needs: needsTaskRuns, run: testTaskRunPatch},
		{name: "unknown ids are ErrTaskRunNotFound", needs: needsTaskRuns, run: testTaskRunUnknown},
		{name: "ListTaskRuns filters, is newest first and honours Limit", needs: needsTaskRuns, run: testListTaskRuns},
	}
}

func testTaskRunLifecycle(t *testing.T, s core.BreadStore) {
	tr := capability[core.TaskRunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	run := taskRun("tr-1", "extract", baseTime)
	noErr(t, tr.CreateTaskRun(t.Context(), run), "CreateTaskRun")
	got, err := tr.GetTaskRun(t.Context(), "tr-1")
	noErr(t, err, "GetTaskRun")
	assertJSONEqual(t, "the created task run", run, got)

	done := core.TaskRunUpdate{
		Status:      core.TaskCompleted,
		Output:      json.RawMessage(`{"entities":[{"name":"Ada","id":12345678901234567890}]}`),
		Usage:       &core.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15},
		DurationMs:  42,
		CompletedAt: baseTime + 42,
	}
	noErr(t, tr.FinishTaskRun(t.Context(), "tr-1", done), "FinishTaskRun")
	run.Status, run.Output, run.Usage, run.DurationMs, run.CompletedAt = done.Status, done.Output, done.Usage, done.DurationMs, done.CompletedAt
	got, err = tr.GetTaskRun(t.Context(), "tr-1")
	noErr(t, err, "GetTaskRun")
	assertJSONEqual(t, "the finished task run", run, got)
	if got.Usage == nil || *got.Usage != *done.Usage {
		t.Errorf("Usage: want %+v, got %+v", *done.Usage, got.Usage)
	}

	// A standalone run has no agent, session or run.
	standalone := taskRun("tr-2", "extract", baseTime)
	standalone.AgentID, standalone.SessionID, standalone.RunID = "", "", ""
	noErr(t, tr.CreateTaskRun(t.Context(), standalone), "CreateTaskRun standalone")
	got, err = tr.GetTaskRun(t.Context(), "tr-2")
	noErr(t, err, "GetTaskRun standalone")
	assertJSONEqual(t, "a standalone task run", standalone, got)
}

func testTaskRunPatch(t *testing.T, s core.BreadStore) {
	tr := capability[core.TaskRunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	want := taskRun("tr-1", "extract", baseTime)
	noErr(t, tr.CreateTaskRun(t.Context(), want), "CreateTaskRun")
	steps := []struct {
		name  string
		patch core.TaskRunUpdate
		apply func(*core.TaskRunRecord)
	}{
		{"empty patch", core.TaskRunUpdate{}, func(*core.TaskRunRecord) {}},
		{"status", core.TaskRunUpdate{Status: core.TaskFailed}, func(r *core.TaskRunRecord) { r.Status = core.TaskFailed }},
		{"error", core.TaskRunUpdate{Error: "model refused"}, func(r *core.TaskRunRecord) { r.Error = "model refused" }},
		{"duration", core.TaskRunUpdate{DurationMs: 7}, func(r *core.TaskRunRecord) { r.DurationMs = 7 }},
		{"output", core.TaskRunUpdate{Output: json.RawMessage(`[1,2]`)}, func(r *core.TaskRunRecord) { r.Output = json.RawMessage(`[1,2]`) }},
		{"usage", core.TaskRunUpdate{Usage: &core.Usage{TotalTokens: 3}}, func(r *core.TaskRunRecord) { r.Usage = &core.Usage{TotalTokens: 3} }},
		{"completedAt", core.TaskRunUpdate{CompletedAt: baseTime + 9}, func(r *core.TaskRunRecord) { r.CompletedAt = baseTime + 9 }},
	}
	for _, st := range steps {
		noErr(t, tr.FinishTaskRun(t.Context(), "tr-1", st.patch), "FinishTaskRun(%s)", st.name)
		st.apply(&want)
		got, err := tr.GetTaskRun(t.Context(), "tr-1")
		noErr(t, err, "GetTaskRun after %s", st.name)
		assertJSONEqual(t, "task run after patching "+st.name, want, got)
	}
}

func testTaskRunUnknown(t *testing.T, s core.BreadStore) {
	tr := capability[core.TaskRunStore](t, s)
	_, err := tr.GetTaskRun(t.Context(), "no-such-run")
	isErr(t, err, core.ErrTaskRunNotFound, "GetTaskRun of an unknown id")
	err = tr.FinishTaskRun(t.Context(), "no-such-run", core.TaskRunUpdate{Status: core.TaskCompleted})
	isErr(t, err, core.ErrTaskRunNotFound, "FinishTaskRun of an unknown id")
	_, err = tr.GetTaskRun(t.Context(), "no-such-run")
	isErr(t, err, core.ErrTaskRunNotFound, "FinishTaskRun must not create the run")
}

func testListTaskRuns(t *testing.T, s core.BreadStore) {
	tr := capability[core.TaskRunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s1"})
	createSession(t, s, core.NewSession{ID: "s2"})
	mk := func(id, task, agent, session string, status core.TaskRunStatus, at int64) {
		r := taskRun(id, task, baseTime+at)
		r.AgentID, r.SessionID = agent, session
		noErr(t, tr.CreateTaskRun(t.Context(), r), "CreateTaskRun(%s)", id)
		if status != core.TaskRunning {
			noErr(t, tr.FinishTaskRun(t.Context(), id, core.TaskRunUpdate{Status: status}), "FinishTaskRun(%s)", id)
		}
	}
	// Created out of time order, so insertion order cannot pass for it.
	mk("t2", "extract", "a", "s1", core.TaskCompleted, 20)
	mk("t4", "summarize", "a", "s2", core.TaskRunning, 40)
	mk("t1", "extract", "a", "s1", core.TaskRunning, 10)
	mk("t5", "extract", "b", "s2", core.TaskFailed, 50)
	mk("t3", "extract", "b", "s1", core.TaskCompleted, 30)
	cases := []struct {
		filter core.TaskRunFilter
		want   []string
	}{
		{core.TaskRunFilter{}, []string{"t5", "t4", "t3", "t2", "t1"}},
		{core.TaskRunFilter{TaskID: "extract"}, []string{"t5", "t3", "t2", "t1"}},
		{core.TaskRunFilter{TaskID: "summarize"}, []string{"t4"}},
		{core.TaskRunFilter{AgentID: "b"}, []string{"t5", "t3"}},
		{core.TaskRunFilter{SessionID: "s1"}, []string{"t3", "t2", "t1"}},
		{core.TaskRunFilter{Status: core.TaskCompleted}, []string{"t3", "t2"}},
		{core.TaskRunFilter{TaskID: "extract", Status: core.TaskCompleted, AgentID: "a"}, []string{"t2"}},
		{core.TaskRunFilter{TaskID: "nope"}, nil},
		{core.TaskRunFilter{Limit: 2}, []string{"t5", "t4"}},
		{core.TaskRunFilter{TaskID: "extract", Limit: 1}, []string{"t5"}},
		{core.TaskRunFilter{Limit: 10}, []string{"t5", "t4", "t3", "t2", "t1"}},
		{core.TaskRunFilter{Limit: -1}, []string{"t5", "t4", "t3", "t2", "t1"}},
	}
	for _, c := range cases {
		got, err := tr.ListTaskRuns(t.Context(), c.filter)
		noErr(t, err, "ListTaskRuns(%+v)", c.filter)
		equalList(t, fmt.Sprintf("ListTaskRuns(%+v)", c.filter), c.want, ids(got, taskRunID))
	}
}
