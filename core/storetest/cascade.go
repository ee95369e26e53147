package storetest

import (
	"testing"

	"github.com/breadai/bread/core"
)

func cascadeCases() []testCase {
	return []testCase{
		{name: "DeleteSession removes its messages and checkpoints only", run: testDeleteCascade},
		{name: "DeleteSession removes its crumbs only", needs: needsCrumbLog, run: testDeleteCascadeCrumbs},
		{name: "CleanupSessions removes their messages and checkpoints only", run: testCleanupCascade},
		{name: "CleanupSessions removes their crumbs only", needs: needsCrumbLog, run: testCleanupCascadeCrumbs},
	}
}

// populate gives a session two messages and a checkpoint.
func populate(t *testing.T, s core.BreadStore, sessionID string) {
	t.Helper()
	turn := turnMessages(baseTime)
	noErr(t, s.AddMessage(t.Context(), sessionID, turn[0]), "AddMessage")
	noErr(t, s.SuspendRun(t.Context(), sessionID, turn[1:2], checkpoint("cp-"+sessionID, sessionID, baseTime)), "SuspendRun")
}

// assertPopulated fails unless the session still has what populate wrote.
func assertPopulated(t *testing.T, s core.BreadStore, sessionID string) {
	t.Helper()
	assertExists(t, s, sessionID)
	msgs, err := s.GetMessages(t.Context(), sessionID)
	noErr(t, err, "GetMessages(%s)", sessionID)
	equal(t, "messages of the surviving session "+sessionID, 2, len(msgs))
	_, err = s.GetCheckpoint(t.Context(), "cp-"+sessionID)
	noErr(t, err, "checkpoint of the surviving session %s", sessionID)
}

// assertCascaded fails unless the session's checkpoint is gone and the
// session with its messages is gone.
func assertCascaded(t *testing.T, s core.BreadStore, sessionID string) {
	t.Helper()
	_, err := s.GetCheckpoint(t.Context(), "cp-"+sessionID)
	isErr(t, err, core.ErrCheckpointNotFound, "checkpoint of the deleted session %s", sessionID)
	assertGone(t, s, sessionID)
}

func testDeleteCascade(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "doomed"})
	createSession(t, s, core.NewSession{ID: "kept"})
	populate(t, s, "doomed")
	populate(t, s, "kept")
	noErr(t, s.DeleteSession(t.Context(), "doomed"), "DeleteSession")
	assertCascaded(t, s, "doomed")
	assertPopulated(t, s, "kept")
}

func testDeleteCascadeCrumbs(t *testing.T, s core.BreadStore) {
	cl := capability[core.CrumbLog](t, s)
	createSession(t, s, core.NewSession{ID: "doomed"})
	createSession(t, s, core.NewSession{ID: "kept"})
	noErr(t, cl.AppendCrumbs(t.Context(), textEntries("run-doomed", "doomed", 1, 3)), "AppendCrumbs")
	noErr(t, cl.AppendCrumbs(t.Context(), textEntries("run-kept", "kept", 1, 2)), "AppendCrumbs")
	// A run whose entries are partly anchored to the doomed session and
	// partly to none keeps the unanchored ones.
	mixed := append(textEntries("run-mixed", "doomed", 1, 1), textEntries("run-mixed", "", 2, 2)...)
	noErr(t, cl.AppendCrumbs(t.Context(), mixed), "AppendCrumbs")
	noErr(t, s.DeleteSession(t.Context(), "doomed"), "DeleteSession")
	assertCrumbSeqs(t, cl, "run-doomed", nil)
	assertCrumbSeqs(t, cl, "run-kept", []int64{1, 2})
	assertCrumbSeqs(t, cl, "run-mixed", []int64{2})
}

func testCleanupCascade(t *testing.T, s core.BreadStore) {
	old := createSession(t, s, core.NewSession{ID: "old"})
	populate(t, s, "old")
	touched, err := s.GetSession(t.Context(), "old")
	noErr(t, err, "GetSession")
	ageOut(max(old.UpdatedAt, touched.UpdatedAt))
	fresh := createSession(t, s, core.NewSession{ID: "fresh"})
	populate(t, s, "fresh")
	n, err := s.CleanupSessions(t.Context(), core.CleanupOptions{OlderThan: cleanupWindow})
	noErr(t, err, "CleanupSessions")
	if !stillFresh(fresh.CreatedAt) {
		t.Logf("the machine stalled past the cleanup window; not checking the fresh session")
		_, err = s.GetCheckpoint(t.Context(), "cp-old")
		isErr(t, err, core.ErrCheckpointNotFound, "checkpoint of the cleaned-up session")
		return
	}
	equal(t, "CleanupSessions count", 1, n)
	assertPopulated(t, s, "fresh")
	assertCascaded(t, s, "old")
}

func testCleanupCascadeCrumbs(t *testing.T, s core.BreadStore) {
	cl := capability[core.CrumbLog](t, s)
	old := createSession(t, s, core.NewSession{ID: "old"})
	noErr(t, cl.AppendCrumbs(t.Context(), textEntries("run-old", "old", 1, 3)), "AppendCrumbs")
	noErr(t, cl.AppendCrumbs(t.Context(), textEntries("run-loose", "", 1, 1)), "AppendCrumbs")
	ageOut(old.UpdatedAt)
	fresh := createSession(t, s, core.NewSession{ID: "fresh"})
	noErr(t, cl.AppendCrumbs(t.Context(), textEntries("run-fresh", "fresh", 1, 2)), "AppendCrumbs")
	_, err := s.CleanupSessions(t.Context(), core.CleanupOptions{OlderThan: cleanupWindow})
	noErr(t, err, "CleanupSessions")
	assertCrumbSeqs(t, cl, "run-old", nil)
	assertCrumbSeqs(t, cl, "run-loose", []int64{1})
	if !stillFresh(fresh.UpdatedAt) {
		t.Logf("the machine stalled past the cleanup window; not checking the fresh session")
		return
	}
	assertCrumbSeqs(t, cl, "run-fresh", []int64{1, 2})
}
