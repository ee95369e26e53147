package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/breadai/bread/core"
)

// runWriteCases hold core.Storage.WriteRun to its contract on every store:
// natively on a core.RunWriter, one write at a time on the others.
func runWriteCases() []testCase {
	return []testCase{
		{name: "a run's start: its session, record and message", needs: needsRuns, run: testRunWriteStart},
		{name: "a run's end: its messages and record on an existing session", needs: needsRuns, run: testRunWriteEnd},
		{name: "a missing session fails and writes nothing", needs: needsRuns, run: testRunWriteMissing},
		{name: "a RunWriter writes nothing when its last write fails", needs: needsRuns, run: testRunWriteAtomic},
		{name: "a session must be created under SessionID", run: testRunWriteSessionID},
		{name: "an owner's end writes nothing once its record was taken", needs: needsRuns, run: testRunWriteTaken},
		{name: "a run's start and end log their crumbs", needs: needsRuns | needsCrumbLog, run: testRunWriteCrumbs},
		{name: "an owner's end logs no crumb once its record was taken", needs: needsRuns | needsCrumbLog, run: testRunWriteCrumbsTaken},
		{name: "an owner's end of its record and crumbs alone", needs: needsRuns | needsCrumbLog, run: testRunWriteEndCrumbsAlone},
		{name: "a crumb seq already logged fails a RunCrumbWriter's whole write", needs: needsRuns | needsCrumbLog, run: testRunWriteCrumbsAtomic},
	}
}

// wrote is WriteRun's error, or an error when it reports it wrote nothing.
func wrote(ok bool, err error) error {
	if err == nil && !ok {
		return errors.New("WriteRun reported it wrote nothing")
	}
	return err
}

func testRunWriteStart(t *testing.T, s core.BreadStore) {
	st := core.NewStorage(s)
	user := textMessage(core.RoleUser, "hello", baseTime)
	rec := runRecord("run-1", "s-new", "replica-a", core.RunRunning, baseTime+30_000)
	noErr(t, wrote(st.WriteRun(t.Context(), core.RunWrite{
		Session:   &core.NewSession{ID: "s-new", AgentID: "writer", Tags: map[string]string{"k": "v"}},
		SessionID: "s-new", Messages: []core.SessionMessage{user}, Run: &rec,
	})), "WriteRun")
	sess, err := s.GetSession(t.Context(), "s-new")
	noErr(t, err, "GetSession of the written session")
	equal(t, "session agent", "writer", sess.AgentID)
	equal(t, "session tag", "v", sess.Tags["k"])
	msgs, err := s.GetMessages(t.Context(), "s-new")
	noErr(t, err, "GetMessages")
	if len(msgs) != 1 {
		t.Fatalf("GetMessages: want 1 message, got %d", len(msgs))
	}
	equal(t, "message role", core.RoleUser, msgs[0].Role)
	assertCompactEqual(t, "message content", user.Content, msgs[0].Content)
	got, err := capability[core.RunStore](t, s).GetRun(t.Context(), "run-1")
	noErr(t, err, "GetRun")
	assertJSONEqual(t, "the written run", rec, got)
}

func testRunWriteEnd(t *testing.T, s core.BreadStore) {
	st := core.NewStorage(s)
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	turn := turnMessages(baseTime)
	noErr(t, s.AddMessage(t.Context(), "s", turn[0]), "AddMessage")
	noErr(t, rs.PutRun(t.Context(), runRecord("run-1", "s", "replica-a", core.RunRunning, baseTime+30_000)), "PutRun")
	end := runRecord("run-1", "s", "", core.RunCompleted, 0)
	end.UpdatedAt = baseTime + 5
	noErr(t, wrote(st.WriteRun(t.Context(), core.RunWrite{SessionID: "s", Messages: turn[1:], Run: &end})), "WriteRun")
	msgs, err := s.GetMessages(t.Context(), "s")
	noErr(t, err, "GetMessages")
	if len(msgs) != len(turn) {
		t.Fatalf("GetMessages: want %d, got %d", len(turn), len(msgs))
	}
	for i, m := range turn {
		assertCompactEqual(t, fmt.Sprintf("message %d", i), m.Content, msgs[i].Content)
	}
	got, err := rs.GetRun(t.Context(), "run-1")
	noErr(t, err, "GetRun")
	equal(t, "status", core.RunCompleted, got.Status)
	equal(t, "owner", "", got.Owner)
	equal(t, "updatedAt", baseTime+5, got.UpdatedAt)

	// A record alone, and nothing at all.
	end.Status = core.RunFailed
	noErr(t, wrote(st.WriteRun(t.Context(), core.RunWrite{SessionID: "s", Run: &end})), "WriteRun of a record alone")
	noErr(t, wrote(st.WriteRun(t.Context(), core.RunWrite{SessionID: "s"})), "WriteRun of nothing")
	got, err = rs.GetRun(t.Context(), "run-1")
	noErr(t, err, "GetRun")
	equal(t, "status", core.RunFailed, got.Status)
}

func testRunWriteMissing(t *testing.T, s core.BreadStore) {
	st := core.NewStorage(s)
	const missing = "no-such-session"
	rec := runRecord("run-orphan", missing, "", core.RunCompleted, 0)
	_, err := st.WriteRun(t.Context(), core.RunWrite{SessionID: missing, Messages: turnMessages(baseTime)[:1], Run: &rec})
	isErr(t, err, core.ErrSessionNotFound, "WriteRun against a missing session")
	_, err = capability[core.RunStore](t, s).GetRun(t.Context(), "run-orphan")
	isErr(t, err, core.ErrRunNotFound, "the record of a failed WriteRun")
	assertNoMessages(t, s, missing)

	_, err = st.WriteRun(t.Context(), core.RunWrite{SessionID: missing, Messages: turnMessages(baseTime)[:2]})
	isErr(t, err, core.ErrSessionNotFound, "WriteRun of messages alone against a missing session")
	assertNoMessages(t, s, missing)
}

// testRunWriteAtomic observes the atomicity of a core.RunWriter: a write
// whose record names a missing session fails after its session and message
// would have been written, and leaves neither.
func testRunWriteAtomic(t *testing.T, s core.BreadStore) {
	w, ok := optional[core.RunWriter](s)
	if !ok {
		t.Skipf("%T is not a core.RunWriter: core.Storage writes one at a time for it", s)
	}
	rec := runRecord("run-1", "no-such-session", "replica-a", core.RunRunning, baseTime+30_000)
	_, err := w.WriteRun(t.Context(), core.RunWrite{
		Session:   &core.NewSession{ID: "s-new"},
		SessionID: "s-new", Messages: turnMessages(baseTime)[:1], Run: &rec,
	})
	isErr(t, err, core.ErrSessionNotFound, "WriteRun with a record of a missing session")
	_, err = s.GetSession(t.Context(), "s-new")
	isErr(t, err, core.ErrSessionNotFound, "the session of a failed WriteRun")
	assertNoMessages(t, s, "s-new")
	_, err = capability[core.RunStore](t, s).GetRun(t.Context(), "run-1")
	isErr(t, err, core.ErrRunNotFound, "the record of a failed WriteRun")
}

func testRunWriteSessionID(t *testing.T, s core.BreadStore) {
	st := core.NewStorage(s)
	for _, w := range []core.RunWrite{
		{Session: &core.NewSession{}, SessionID: ""},
		{Session: &core.NewSession{ID: "a"}, SessionID: "b"},
	} {
		_, err := st.WriteRun(t.Context(), w)
		if be := core.AsBreadError(err, ""); err == nil || be.Code != core.CodeValidationError {
			t.Errorf("WriteRun(%+v): want VALIDATION_ERROR, got %v", w, err)
		}
	}
	_, err := s.GetSession(t.Context(), "a")
	isErr(t, err, core.ErrSessionNotFound, "a session of a refused WriteRun")
}

// testRunWriteTaken: a run's end by its owner (Owner set) is EndRun's
// write: it ends a record that is its owner's, and writes nothing, the
// messages with it, once the record was declared lost or runs under
// another owner.
func testRunWriteTaken(t *testing.T, s core.BreadStore) {
	st := core.NewStorage(s)
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	answer := []core.SessionMessage{textMessage(core.RoleAssistant, "the answer", baseTime)}
	for _, c := range []struct {
		name  string
		cur   core.RunRecord
		lose  bool
		wrote bool
	}{
		{"its own", runRecord("own", "s", "replica-a", core.RunRunning, baseTime+30_000), false, true},
		{"lost", runRecord("lost", "s", "replica-a", core.RunRunning, baseTime+1), true, false},
		{"another owner's", runRecord("other", "s", "replica-b", core.RunRunning, baseTime+30_000), false, false},
	} {
		noErr(t, rs.PutRun(t.Context(), c.cur), "PutRun(%s)", c.name)
		if c.lose {
			won, err := rs.LoseRun(t.Context(), c.cur.ID, baseTime+2)
			noErr(t, err, "LoseRun(%s)", c.name)
			equal(t, "LoseRun won", true, won)
		}
		before, err := s.GetMessages(t.Context(), "s")
		noErr(t, err, "GetMessages")
		end := runRecord(c.cur.ID, "s", "", core.RunCompleted, 0)
		ok, err := st.WriteRun(t.Context(), core.RunWrite{SessionID: "s", Messages: answer, Run: &end, Owner: "replica-a"})
		noErr(t, err, "WriteRun(%s)", c.name)
		equal(t, "WriteRun("+c.name+") wrote", c.wrote, ok)
		got, err := rs.GetRun(t.Context(), c.cur.ID)
		noErr(t, err, "GetRun(%s)", c.name)
		after, err := s.GetMessages(t.Context(), "s")
		noErr(t, err, "GetMessages")
		if c.wrote {
			equal(t, c.name+" status", core.RunCompleted, got.Status)
			equal(t, c.name+" messages", len(before)+1, len(after))
			continue
		}
		if got.Status == core.RunCompleted {
			t.Errorf("WriteRun(%s) ended a record taken from its owner: %+v", c.name, got)
		}
		if _, native := optional[core.RunWriter](s); native {
			equal(t, c.name+" messages (a RunWriter writes none)", len(before), len(after))
		}
	}
}

// testRunWriteCrumbs: a run write's Crumbs are appended with the rest, as
// AppendCrumbs appends them: the start's with its new session, the end's
// with the owner's end of its record.
func testRunWriteCrumbs(t *testing.T, s core.BreadStore) {
	st := core.NewStorage(s)
	rec := runRecord("run-1", "s-new", "replica-a", core.RunRunning, baseTime+30_000)
	noErr(t, wrote(st.WriteRun(t.Context(), core.RunWrite{
		Session:   &core.NewSession{ID: "s-new"},
		SessionID: "s-new", Messages: turnMessages(baseTime)[:1], Run: &rec,
		Crumbs: []core.CrumbLogEntry{textEntry("run-1", 1, "s-new")},
	})), "WriteRun of a start with its crumb")
	cl := capability[core.CrumbLog](t, s)
	assertCrumbSeqs(t, cl, "run-1", []int64{1})

	end := runRecord("run-1", "s-new", "", core.RunCompleted, 0)
	noErr(t, wrote(st.WriteRun(t.Context(), core.RunWrite{
		SessionID: "s-new", Messages: turnMessages(baseTime)[1:2], Run: &end, Owner: "replica-a",
		Crumbs: textEntries("run-1", "s-new", 2, 3),
	})), "WriteRun of an end with its crumbs")
	got, err := cl.GetCrumbs(t.Context(), "run-1", 0, 0)
	noErr(t, err, "GetCrumbs")
	want := textEntries("run-1", "s-new", 1, 3)
	if len(got) != len(want) {
		t.Fatalf("GetCrumbs: want %d entries, got %d", len(want), len(got))
	}
	for i := range want {
		assertEntry(t, want[i], got[i])
	}
	cur, err := capability[core.RunStore](t, s).GetRun(t.Context(), "run-1")
	noErr(t, err, "GetRun")
	equal(t, "status", core.RunCompleted, cur.Status)

	// Crumbs alone.
	noErr(t, wrote(st.WriteRun(t.Context(), core.RunWrite{SessionID: "s-new", Crumbs: textEntries("run-1", "s-new", 4, 4)})), "WriteRun of crumbs alone")
	assertCrumbSeqs(t, cl, "run-1", []int64{1, 2, 3, 4})
}

// testRunWriteEndCrumbsAlone: an owner's end with crumbs and no message
// (a failed run's record and its agent:error, the engine's endLogged)
// writes both.
func testRunWriteEndCrumbsAlone(t *testing.T, s core.BreadStore) {
	st := core.NewStorage(s)
	createSession(t, s, core.NewSession{ID: "s"})
	noErr(t, capability[core.RunStore](t, s).PutRun(t.Context(), runRecord("run-1", "s", "replica-a", core.RunRunning, baseTime+30_000)), "PutRun")
	end := runRecord("run-1", "s", "", core.RunFailed, 0)
	end.ErrorCode = core.CodeAgentError
	noErr(t, wrote(st.WriteRun(t.Context(), core.RunWrite{SessionID: "s", Run: &end, Owner: "replica-a", Crumbs: textEntries("run-1", "s", 1, 2)})),
		"WriteRun of an end with crumbs and no message")
	assertCrumbSeqs(t, capability[core.CrumbLog](t, s), "run-1", []int64{1, 2})
	cur, err := capability[core.RunStore](t, s).GetRun(t.Context(), "run-1")
	noErr(t, err, "GetRun")
	equal(t, "status", core.RunFailed, cur.Status)
	equal(t, "error code", core.CodeAgentError, cur.ErrorCode)
	assertNoMessages(t, s, "s")
}

// testRunWriteCrumbsTaken: an owner's end whose record was taken (a
// sweeper's LoseRun) logs none of its crumbs, so nothing follows the
// RUN_LOST the sweeper logs.
func testRunWriteCrumbsTaken(t *testing.T, s core.BreadStore) {
	st := core.NewStorage(s)
	rs := capability[core.RunStore](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	noErr(t, rs.PutRun(t.Context(), runRecord("lost", "s", "replica-a", core.RunRunning, baseTime+1)), "PutRun")
	won, err := rs.LoseRun(t.Context(), "lost", baseTime+2)
	noErr(t, err, "LoseRun")
	equal(t, "LoseRun won", true, won)
	end := runRecord("lost", "s", "", core.RunCompleted, 0)
	ok, err := st.WriteRun(t.Context(), core.RunWrite{
		SessionID: "s", Messages: turnMessages(baseTime)[1:2], Run: &end, Owner: "replica-a",
		Crumbs: textEntries("lost", "s", 1, 2),
	})
	noErr(t, err, "WriteRun of a taken run's end")
	equal(t, "WriteRun wrote", false, ok)
	assertCrumbSeqs(t, capability[core.CrumbLog](t, s), "lost", []int64{})
}

// testRunWriteCrumbsAtomic: with a RunCrumbWriter the crumbs are part of
// the one atomic write: a seq the log holds already (another instance's
// RUN_LOST, say) fails it, and nothing of it is written.
func testRunWriteCrumbsAtomic(t *testing.T, s core.BreadStore) {
	st := core.NewStorage(s)
	if !st.WritesRunCrumbs() {
		t.Skipf("%T writes a run write's crumbs after the rest (not a core.RunCrumbWriter)", s)
	}
	createSession(t, s, core.NewSession{ID: "s"})
	cl := capability[core.CrumbLog](t, s)
	noErr(t, cl.AppendCrumbs(t.Context(), textEntries("run-1", "s", 1, 2)), "AppendCrumbs")
	rec := runRecord("run-1", "s", "", core.RunCompleted, 0)
	_, err := st.WriteRun(t.Context(), core.RunWrite{
		SessionID: "s", Messages: turnMessages(baseTime)[1:2], Run: &rec,
		Crumbs: textEntries("run-1", "s", 2, 3),
	})
	if err == nil {
		t.Fatal("WriteRun with a crumb seq already logged: want an error, got none")
	}
	assertNoMessages(t, s, "s")
	_, err = capability[core.RunStore](t, s).GetRun(t.Context(), "run-1")
	isErr(t, err, core.ErrRunNotFound, "the record of a failed WriteRun")
	assertCrumbSeqs(t, cl, "run-1", []int64{1, 2})
}
