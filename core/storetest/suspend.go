package storetest

import (
	"fmt"
	"testing"

	"github.com/breadai/bread/core"
)

func suspendCases() []testCase {
	return []testCase{
		{name: "messages and checkpoint are both visible", run: testSuspendRun},
		{name: "messages follow earlier messages in order", run: testSuspendRunOrder},
		{name: "a missing session fails and writes nothing", run: testSuspendRunAtomic},
		{name: "touches UpdatedAt", run: testSuspendRunTouches},
		{name: "a turn's several checkpoints are all saved", run: testSuspendRunSet},
		{name: "a set with a bad checkpoint writes nothing", run: testSuspendRunSetAtomic},
	}
}

func testSuspendRun(t *testing.T, s core.BreadStore) {
	sess := createSession(t, s, core.NewSession{ID: "s"})
	msgs := turnMessages(baseTime)[:2] // user input and the assistant's pending tool call
	cp := fullCheckpoint("cp-1", sess.ID)
	noErr(t, s.SuspendRun(t.Context(), sess.ID, msgs, cp), "SuspendRun")

	got, err := s.GetMessages(t.Context(), sess.ID)
	noErr(t, err, "GetMessages")
	if len(got) != len(msgs) {
		t.Fatalf("GetMessages after SuspendRun: want %d, got %d", len(msgs), len(got))
	}
	for i, m := range msgs {
		equal(t, fmt.Sprintf("message %d role", i), m.Role, got[i].Role)
		equal(t, fmt.Sprintf("message %d session", i), sess.ID, got[i].SessionID)
		assertCompactEqual(t, fmt.Sprintf("message %d content", i), m.Content, got[i].Content)
		if got[i].ID == "" {
			t.Errorf("message %d has no id", i)
		}
	}
	saved, err := s.GetCheckpoint(t.Context(), cp.ID)
	noErr(t, err, "GetCheckpoint after SuspendRun")
	assertJSONEqual(t, "checkpoint saved by SuspendRun", cp, saved)
}

func testSuspendRunOrder(t *testing.T, s core.BreadStore) {
	sess := createSession(t, s, core.NewSession{})
	turn := turnMessages(baseTime)
	for _, m := range turn[:2] {
		noErr(t, s.AddMessage(t.Context(), sess.ID, m), "AddMessage")
	}
	noErr(t, s.SuspendRun(t.Context(), sess.ID, turn[2:], checkpoint("cp-1", sess.ID, baseTime)), "SuspendRun")
	got, err := s.GetMessages(t.Context(), sess.ID)
	noErr(t, err, "GetMessages")
	if len(got) != len(turn) {
		t.Fatalf("GetMessages: want %d, got %d", len(turn), len(got))
	}
	for i, m := range turn {
		assertCompactEqual(t, fmt.Sprintf("message %d", i), m.Content, got[i].Content)
	}

	// SuspendRun with no messages still saves the checkpoint.
	noErr(t, s.SuspendRun(t.Context(), sess.ID, nil, checkpoint("cp-2", sess.ID, baseTime)), "SuspendRun without messages")
	_, err = s.GetCheckpoint(t.Context(), "cp-2")
	noErr(t, err, "GetCheckpoint after SuspendRun without messages")
}

// testSuspendRunAtomic observes atomicity the portable way: a SuspendRun that
// must fail (its session is missing) leaves neither the checkpoint nor the
// messages behind.
func testSuspendRunAtomic(t *testing.T, s core.BreadStore) {
	const missing = "no-such-session"
	err := s.SuspendRun(t.Context(), missing, turnMessages(baseTime), checkpoint("cp-orphan", missing, baseTime))
	if err == nil {
		t.Fatal("SuspendRun against a missing session succeeded")
	}
	isErr(t, err, core.ErrSessionNotFound, "SuspendRun against a missing session")
	_, err = s.GetCheckpoint(t.Context(), "cp-orphan")
	isErr(t, err, core.ErrCheckpointNotFound, "the checkpoint of a failed SuspendRun")
	list, err := s.ListCheckpoints(t.Context())
	noErr(t, err, "ListCheckpoints")
	equal(t, "checkpoints after a failed SuspendRun", 0, len(list))
	assertNoMessages(t, s, missing)
	createSession(t, s, core.NewSession{ID: missing})
	msgs, err := s.GetMessages(t.Context(), missing)
	noErr(t, err, "GetMessages")
	equal(t, "messages a failed SuspendRun left for a later session of that id", 0, len(msgs))
}

func testSuspendRunTouches(t *testing.T, s core.BreadStore) {
	sess := createSession(t, s, core.NewSession{})
	waitPast(sess.UpdatedAt + 1)
	before := core.NowMillis()
	noErr(t, s.SuspendRun(t.Context(), sess.ID, turnMessages(baseTime)[:2], checkpoint("cp-1", sess.ID, baseTime)), "SuspendRun")
	got, err := s.GetSession(t.Context(), sess.ID)
	noErr(t, err, "GetSession")
	if got.UpdatedAt < before {
		t.Errorf("UpdatedAt after SuspendRun is %d, want at least %d", got.UpdatedAt, before)
	}
}

// testSuspendRunSet: a turn that called several human tools suspends with
// one checkpoint per call, saved together with the turn's messages.
func testSuspendRunSet(t *testing.T, s core.BreadStore) {
	sess := createSession(t, s, core.NewSession{})
	set := &core.HumanSet{ID: "set-1", CheckpointIDs: []string{"cp-a", "cp-b", "cp-c"}}
	var cps []core.CheckpointRecord
	for i, id := range set.CheckpointIDs {
		cp := checkpoint(id, sess.ID, baseTime+int64(i))
		cp.Set = set
		cps = append(cps, cp)
	}
	noErr(t, s.SuspendRun(t.Context(), sess.ID, turnMessages(baseTime)[:2], cps...), "SuspendRun with a set")
	for _, want := range cps {
		got, err := s.GetCheckpoint(t.Context(), want.ID)
		noErr(t, err, "GetCheckpoint(%s)", want.ID)
		assertJSONEqual(t, "checkpoint "+want.ID, want, got)
		equal(t, "slot of "+want.ID, set.Slot(want.ID), got.Set.Slot(want.ID))
	}
	msgs, err := s.GetMessages(t.Context(), sess.ID)
	noErr(t, err, "GetMessages")
	equal(t, "messages", 2, len(msgs))
}

// testSuspendRunSetAtomic: when one checkpoint of a set cannot be stored
// (it names another session: a turn's checkpoints belong to its session),
// none of them is, and neither are the messages.
func testSuspendRunSetAtomic(t *testing.T, s core.BreadStore) {
	sess := createSession(t, s, core.NewSession{})
	other := createSession(t, s, core.NewSession{})
	good := checkpoint("cp-good", sess.ID, baseTime)
	bad := checkpoint("cp-bad", other.ID, baseTime)
	err := s.SuspendRun(t.Context(), sess.ID, turnMessages(baseTime)[:2], good, bad)
	isErr(t, err, core.ErrValidation, "SuspendRun with a checkpoint of another session")
	_, err = s.GetCheckpoint(t.Context(), bad.ID)
	isErr(t, err, core.ErrCheckpointNotFound, "the bad checkpoint of a failed set")
	_, err = s.GetCheckpoint(t.Context(), good.ID)
	isErr(t, err, core.ErrCheckpointNotFound, "the good checkpoint of a failed set")
	msgs, err := s.GetMessages(t.Context(), sess.ID)
	noErr(t, err, "GetMessages")
	equal(t, "messages a failed SuspendRun left", 0, len(msgs))
}
