package cli_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/sqlite"
)

// seedSessionRecords writes, into the SQLite database of a served project,
// a loop and a task run of session, and a standalone task run: the records
// an agent's loop and task tools leave, without scripting a model through
// a whole loop. The server reads them back through its own store.
func seedSessionRecords(t *testing.T, dir, session string) {
	t.Helper()
	st, err := sqlite.New(sqlite.Options{Path: filepath.Join(dir, "bread.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, now := t.Context(), core.NowMillis()
	if err := st.CreateLoop(ctx, core.LoopRecord{ID: "loop-of-" + session, AgentID: "chat", SessionID: session, RunID: "run-of-" + session,
		Pool: []string{"chat"}, Pipeline: []string{"chat"}, MaxIterations: 2, Status: core.LoopRunning, StartedAt: now}); err != nil {
		t.Fatal(err)
	}
	for id, sess := range map[string]string{"task-of-" + session: session, "task-standalone": ""} {
		if err := st.CreateTaskRun(ctx, core.TaskRunRecord{ID: id, TaskID: "summarise", SessionID: sess, Model: core.TaskModelInfo{Provider: "replay", Model: "m"},
			Input: json.RawMessage(`{"text":"secret"}`), Status: core.TaskRunning, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
}

// checkSessionRecords checks, over the binary, that the loops and task runs
// of session (seeded by seedSessionRecords) are owner's: an intruder's
// listings, with or without ?session=, leave them out as they leave out
// a missing session's, and reading one is 404 as for a missing one; the
// owner and an admin see them, and the standalone task run is the admins'.
func checkSessionRecords(t *testing.T, base, session string, owner, intruder, admin []string) {
	t.Helper()
	get := func(path string, hdr []string) (int, string) {
		t.Helper()
		return statusOf(t, "GET", base+path, "", hdr...)
	}
	loopID, taskID := "loop-of-"+session, "task-of-"+session
	for _, path := range []string{"/loops", "/loops?session=" + session, "/loops?status=running", "/tasks", "/tasks?session=" + session, "/tasks?task=summarise&limit=1"} {
		status, body := get(path, intruder)
		if status != http.StatusOK || strings.TrimSpace(body) != "[]" {
			t.Errorf("intruder: GET %s = %d %s, want 200 []", path, status, body)
		}
		// The same answer as for a session nobody has.
		if missing := strings.ReplaceAll(path, session, "no-such-session"); missing != path {
			if s2, b2 := get(missing, intruder); s2 != status || b2 != body {
				t.Errorf("intruder: GET %s = %d %s, but GET %s = %d %s", path, status, body, missing, s2, b2)
			}
		}
	}
	for _, c := range []struct{ path, code string }{
		{"/loops/" + loopID, `"LOOP_NOT_FOUND"`},
		{"/loops/no-such-loop", `"LOOP_NOT_FOUND"`},
		{"/tasks/" + taskID, `"TASK_RUN_NOT_FOUND"`},
		{"/tasks/task-standalone", `"TASK_RUN_NOT_FOUND"`},
		{"/tasks/no-such-task", `"TASK_RUN_NOT_FOUND"`},
	} {
		if status, body := get(c.path, intruder); status != http.StatusNotFound || !strings.Contains(body, c.code) {
			t.Errorf("intruder: GET %s = %d %s, want 404 %s", c.path, status, body, c.code)
		}
	}
	for who, hdr := range map[string][]string{"owner": owner, "admin": admin} {
		for _, c := range []struct{ path, want string }{
			{"/loops", loopID},
			{"/loops?session=" + session, loopID},
			{"/loops/" + loopID, loopID},
			{"/tasks?session=" + session, taskID},
			{"/tasks/" + taskID, taskID},
		} {
			if status, body := get(c.path, hdr); status != http.StatusOK || !strings.Contains(body, c.want) {
				t.Errorf("%s: GET %s = %d %s, want %s", who, c.path, status, body, c.want)
			}
		}
	}
	if _, body := get("/tasks", owner); strings.Contains(body, "task-standalone") {
		t.Errorf("the owner lists the standalone task run: %s", body)
	}
	if status, body := get("/tasks/task-standalone", admin); status != http.StatusOK {
		t.Errorf("admin reads the standalone task run: %d %s", status, body)
	}
}
