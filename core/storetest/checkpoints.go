package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
)

func checkpointCases() []testCase {
	return []testCase{
		{name: "save, get, list and delete", run: testCheckpointLifecycle},
		{name: "every field round-trips", run: testCheckpointFields},
		{name: "SaveCheckpoint replaces", run: testCheckpointUpsert},
		{name: "composition parent linkage round-trips", run: testCheckpointParent},
		{name: "supervisor pending delegations round-trip", run: testCheckpointPending},
		{name: "ListCheckpoints is oldest first", run: testCheckpointOrder},
		{name: "unknown ids are ErrCheckpointNotFound", run: testCheckpointUnknown},
		{name: "concurrent DeleteCheckpoint claims exactly once", run: testCheckpointClaimRace},
	}
}

func testCheckpointLifecycle(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "s"})
	list, err := s.ListCheckpoints(t.Context())
	noErr(t, err, "ListCheckpoints of an empty store")
	equal(t, "checkpoints in an empty store", 0, len(list))

	cp := checkpoint("cp-1", "s", baseTime)
	noErr(t, s.SaveCheckpoint(t.Context(), cp), "SaveCheckpoint")
	got, err := s.GetCheckpoint(t.Context(), "cp-1")
	noErr(t, err, "GetCheckpoint")
	assertJSONEqual(t, "GetCheckpoint", cp, got)
	list, err = s.ListCheckpoints(t.Context())
	noErr(t, err, "ListCheckpoints")
	equalList(t, "ListCheckpoints", []string{"cp-1"}, ids(list, checkpointID))

	claimed, err := s.DeleteCheckpoint(t.Context(), "cp-1")
	noErr(t, err, "DeleteCheckpoint")
	assertJSONEqual(t, "the record DeleteCheckpoint returns", cp, claimed)
	_, err = s.DeleteCheckpoint(t.Context(), "cp-1")
	isErr(t, err, core.ErrCheckpointNotFound, "second DeleteCheckpoint")
	_, err = s.GetCheckpoint(t.Context(), "cp-1")
	isErr(t, err, core.ErrCheckpointNotFound, "GetCheckpoint after DeleteCheckpoint")
	list, err = s.ListCheckpoints(t.Context())
	noErr(t, err, "ListCheckpoints")
	equal(t, "checkpoints after DeleteCheckpoint", 0, len(list))
}

func testCheckpointFields(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "s"})
	cp := fullCheckpoint("cp-full", "s")
	cp.Pending = []core.PendingDelegation{{ToolCallID: "c1", ChildCheckpointID: "cp-c1", SubAgentID: "researcher"}}
	noErr(t, s.SaveCheckpoint(t.Context(), cp), "SaveCheckpoint")
	got, err := s.GetCheckpoint(t.Context(), cp.ID)
	noErr(t, err, "GetCheckpoint")
	assertJSONEqual(t, "GetCheckpoint", cp, got)
	equal(t, "Prompt", cp.Prompt, got.Prompt)
	equal(t, "Kind", cp.Kind, got.Kind)
	equal(t, "Skill", cp.Skill, got.Skill)
	equal(t, "ToolCallID", cp.ToolCallID, got.ToolCallID)
	equal(t, "CreatedAt", cp.CreatedAt, got.CreatedAt)
	list, err := s.ListCheckpoints(t.Context())
	noErr(t, err, "ListCheckpoints")
	if len(list) != 1 {
		t.Fatalf("ListCheckpoints: want 1, got %d", len(list))
	}
	assertJSONEqual(t, "ListCheckpoints", cp, list[0])
}

func testCheckpointUpsert(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "s"})
	first := fullCheckpoint("cp-1", "s")
	noErr(t, s.SaveCheckpoint(t.Context(), first), "SaveCheckpoint")
	second := checkpoint("cp-1", "s", baseTime+5)
	second.ToolName = "approve"
	second.Prompt = "second"
	noErr(t, s.SaveCheckpoint(t.Context(), second), "SaveCheckpoint again")
	got, err := s.GetCheckpoint(t.Context(), "cp-1")
	noErr(t, err, "GetCheckpoint")
	assertJSONEqual(t, "the replaced checkpoint", second, got)
	if got.Parent != nil {
		t.Errorf("the replacement has no parent but the stored record kept %+v", got.Parent)
	}
	list, err := s.ListCheckpoints(t.Context())
	noErr(t, err, "ListCheckpoints")
	equal(t, "checkpoints after an upsert", 1, len(list))
}

func testCheckpointParent(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "s"})
	cp := fullCheckpoint("cp-1", "s")
	noErr(t, s.SaveCheckpoint(t.Context(), cp), "SaveCheckpoint")
	got, err := s.GetCheckpoint(t.Context(), "cp-1")
	noErr(t, err, "GetCheckpoint")
	if got.Parent == nil {
		t.Fatal("Parent was lost")
	}
	assertJSONEqual(t, "Parent", cp.Parent, got.Parent)
	if got.Parent.Outer == nil || got.Parent.Outer.Outer == nil {
		t.Errorf("nested Outer parents were lost: %+v", got.Parent)
	}

	// A checkpoint saved without a parent stays without one.
	noErr(t, s.SaveCheckpoint(t.Context(), checkpoint("cp-2", "s", baseTime)), "SaveCheckpoint without parent")
	plain, err := s.GetCheckpoint(t.Context(), "cp-2")
	noErr(t, err, "GetCheckpoint")
	if plain.Parent != nil {
		t.Errorf("a checkpoint saved without a parent came back with %+v", plain.Parent)
	}

	// A composition can re-save the record with its parent changed.
	updated := fullCheckpoint("cp-1", "s")
	updated.Parent.Parallel.BranchIndex = 0
	updated.Parent.RemainingSteps = updated.Parent.RemainingSteps[:1]
	noErr(t, s.SaveCheckpoint(t.Context(), updated), "SaveCheckpoint with an updated parent")
	got, err = s.GetCheckpoint(t.Context(), "cp-1")
	noErr(t, err, "GetCheckpoint")
	assertJSONEqual(t, "updated Parent", updated.Parent, got.Parent)
}

func testCheckpointPending(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "s"})
	pending := []core.PendingDelegation{
		{ToolCallID: "call-1", ChildCheckpointID: "cp-child-1", SubAgentID: "researcher"},
		{ToolCallID: "call-2", ChildCheckpointID: "cp-child-2", SubAgentID: "writer"},
	}
	cp := checkpoint("cp-1", "s", baseTime)
	cp.ToolName = "core_delegate"
	cp.Pending = pending
	noErr(t, s.SaveCheckpoint(t.Context(), cp), "SaveCheckpoint")
	got, err := s.GetCheckpoint(t.Context(), "cp-1")
	noErr(t, err, "GetCheckpoint")
	equalList(t, "Pending", pending, got.Pending)

	// Delegations resolve one by one: the upsert must shrink the list.
	cp.Pending = pending[1:]
	noErr(t, s.SaveCheckpoint(t.Context(), cp), "SaveCheckpoint with fewer pending")
	got, err = s.GetCheckpoint(t.Context(), "cp-1")
	noErr(t, err, "GetCheckpoint")
	equalList(t, "Pending after one resolved", pending[1:], got.Pending)

	noErr(t, s.SaveCheckpoint(t.Context(), checkpoint("cp-2", "s", baseTime)), "SaveCheckpoint without pending")
	plain, err := s.GetCheckpoint(t.Context(), "cp-2")
	noErr(t, err, "GetCheckpoint")
	equal(t, "pending of a checkpoint saved without any", 0, len(plain.Pending))
}

func testCheckpointOrder(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "s"})
	for _, c := range []struct {
		id string
		at int64
	}{{"cp-middle", baseTime + 20}, {"cp-new", baseTime + 30}, {"cp-old", baseTime + 10}} {
		noErr(t, s.SaveCheckpoint(t.Context(), checkpoint(c.id, "s", c.at)), "SaveCheckpoint(%s)", c.id)
	}
	list, err := s.ListCheckpoints(t.Context())
	noErr(t, err, "ListCheckpoints")
	equalList(t, "ListCheckpoints order", []string{"cp-old", "cp-middle", "cp-new"}, ids(list, checkpointID))
}

func testCheckpointUnknown(t *testing.T, s core.BreadStore) {
	_, err := s.GetCheckpoint(t.Context(), "no-such-checkpoint")
	isErr(t, err, core.ErrCheckpointNotFound, "GetCheckpoint of an unknown id")
	_, err = s.DeleteCheckpoint(t.Context(), "no-such-checkpoint")
	isErr(t, err, core.ErrCheckpointNotFound, "DeleteCheckpoint of an unknown id")
}

// testCheckpointClaimRace is the resume claim: of many concurrent deletes of
// one checkpoint exactly one returns it.
func testCheckpointClaimRace(t *testing.T, s core.BreadStore) {
	const rounds, claimers = 5, 50
	createSession(t, s, core.NewSession{ID: "s"})
	for round := range rounds {
		id := fmt.Sprintf("cp-race-%d", round)
		noErr(t, s.SaveCheckpoint(t.Context(), checkpoint(id, "s", baseTime+int64(round))), "SaveCheckpoint(%s)", id)

		var (
			start    = make(chan struct{})
			wg       sync.WaitGroup
			mu       sync.Mutex
			winners  int
			notFound int
			others   []error
		)
		for range claimers {
			wg.Go(func() {
				<-start
				rec, err := s.DeleteCheckpoint(t.Context(), id)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && rec.ID == id:
					winners++
				case errors.Is(err, core.ErrCheckpointNotFound):
					notFound++
				case err == nil:
					others = append(others, fmt.Errorf("claimed a record with id %q", rec.ID))
				default:
					others = append(others, err)
				}
			})
		}
		close(start)
		wg.Wait()
		if winners != 1 || notFound != claimers-1 || len(others) > 0 {
			t.Errorf("round %d: %d claimers got the record, %d got ErrCheckpointNotFound, other outcomes %v; want exactly 1 and %d",
				round, winners, notFound, others, claimers-1)
		}
		_, err := s.GetCheckpoint(t.Context(), id)
		isErr(t, err, core.ErrCheckpointNotFound, "GetCheckpoint after the claim")
	}
}
