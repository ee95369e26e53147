package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
)

func claimCases() []testCase {
	return []testCase{
		{name: "ClaimCheckpoint claims an unclaimed checkpoint and returns it", run: testClaimRoundTrip},
		{name: "a live claim refuses other claimants; a lapsed one does not", run: testClaimLapse},
		{name: "of concurrent claims exactly one wins", run: testClaimRace},
		{name: "RenewCheckpointClaims extends only the claimant's claims", run: testClaimRenew},
		{name: "SaveCheckpoint clears a claim; DeleteCheckpoint removes a claimed checkpoint", run: testClaimSaveDelete},
	}
}

func testClaimRoundTrip(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "s"})
	cp := fullCheckpoint("cp-1", "s")
	noErr(t, s.SaveCheckpoint(t.Context(), cp), "SaveCheckpoint")
	got, err := s.ClaimCheckpoint(t.Context(), "cp-1", "replica-a", baseTime, baseTime+1000)
	noErr(t, err, "ClaimCheckpoint")
	want := cp
	want.ClaimedBy, want.ClaimedUntil = "replica-a", baseTime+1000
	assertJSONEqual(t, "the claimed checkpoint", want, got)
	stored, err := s.GetCheckpoint(t.Context(), "cp-1")
	noErr(t, err, "GetCheckpoint")
	assertJSONEqual(t, "the stored claim", want, stored)
	_, err = s.ClaimCheckpoint(t.Context(), "no-such-checkpoint", "replica-a", baseTime, baseTime+1000)
	isErr(t, err, core.ErrCheckpointNotFound, "ClaimCheckpoint of an unknown id")
	_, err = s.ClaimCheckpoint(t.Context(), "bad\x00id", "replica-a", baseTime, baseTime+1000)
	isErr(t, err, core.ErrCheckpointNotFound, "ClaimCheckpoint of an id with a NUL byte")
}

func testClaimLapse(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "s"})
	noErr(t, s.SaveCheckpoint(t.Context(), checkpoint("cp-1", "s", baseTime)), "SaveCheckpoint")
	_, err := s.ClaimCheckpoint(t.Context(), "cp-1", "a", baseTime, baseTime+1000)
	noErr(t, err, "first claim")
	_, err = s.ClaimCheckpoint(t.Context(), "cp-1", "b", baseTime+500, baseTime+1500)
	isErr(t, err, core.ErrCheckpointClaimed, "a claim while another is live")
	// The same claimant cannot claim twice either: a second resume on one
	// replica is as much a duplicate as one on another.
	_, err = s.ClaimCheckpoint(t.Context(), "cp-1", "a", baseTime+500, baseTime+1500)
	isErr(t, err, core.ErrCheckpointClaimed, "a second claim by the same claimant")
	got, err := s.ClaimCheckpoint(t.Context(), "cp-1", "b", baseTime+1001, baseTime+2000)
	noErr(t, err, "a claim after the first lapsed")
	equal(t, "claimant after the lapse", "b", got.ClaimedBy)
	equal(t, "claim after the lapse", baseTime+2000, got.ClaimedUntil)
}

func testClaimRace(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "s"})
	noErr(t, s.SaveCheckpoint(t.Context(), checkpoint("cp-1", "s", baseTime)), "SaveCheckpoint")
	const claimants = 12
	var wg sync.WaitGroup
	var mu sync.Mutex
	var winners []string
	for range claimants {
		// Readers race the claims too (under -race, a store that changes a
		// record in place while another goroutine copies it is caught).
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.GetCheckpoint(t.Context(), "cp-1"); err != nil {
				t.Errorf("GetCheckpoint during claims: %v", err)
			}
		}()
	}
	for i := range claimants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("claimant-%d", i)
			got, err := s.ClaimCheckpoint(t.Context(), "cp-1", name, baseTime, baseTime+60_000)
			switch {
			case err == nil:
				mu.Lock()
				winners = append(winners, got.ClaimedBy)
				mu.Unlock()
			case !isCode(err, core.CodeCheckpointClaimed):
				t.Errorf("%s: %v, want a win or ErrCheckpointClaimed", name, err)
			}
		}()
	}
	wg.Wait()
	if len(winners) != 1 {
		t.Fatalf("%d claimants won: %v", len(winners), winners)
	}
	stored, err := s.GetCheckpoint(t.Context(), "cp-1")
	noErr(t, err, "GetCheckpoint")
	equal(t, "the stored claimant", winners[0], stored.ClaimedBy)
}

func testClaimRenew(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "s"})
	for _, id := range []string{"cp-a1", "cp-a2", "cp-b", "cp-free"} {
		noErr(t, s.SaveCheckpoint(t.Context(), checkpoint(id, "s", baseTime)), "SaveCheckpoint(%s)", id)
	}
	for id, who := range map[string]string{"cp-a1": "a", "cp-a2": "a", "cp-b": "b"} {
		_, err := s.ClaimCheckpoint(t.Context(), id, who, baseTime, baseTime+100)
		noErr(t, err, "ClaimCheckpoint(%s)", id)
	}
	n, err := s.RenewCheckpointClaims(t.Context(), "a", baseTime+5000)
	noErr(t, err, "RenewCheckpointClaims")
	equal(t, "claims renewed", 2, n)
	for id, until := range map[string]int64{"cp-a1": baseTime + 5000, "cp-a2": baseTime + 5000, "cp-b": baseTime + 100, "cp-free": 0} {
		got, err := s.GetCheckpoint(t.Context(), id)
		noErr(t, err, "GetCheckpoint(%s)", id)
		equal(t, "claim of "+id, until, got.ClaimedUntil)
	}
}

func testClaimSaveDelete(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "s"})
	noErr(t, s.SaveCheckpoint(t.Context(), checkpoint("cp-1", "s", baseTime)), "SaveCheckpoint")
	_, err := s.ClaimCheckpoint(t.Context(), "cp-1", "a", baseTime, baseTime+60_000)
	noErr(t, err, "ClaimCheckpoint")
	// Saving the checkpoint again (a composition updating its state) releases
	// nothing it should not: the saved record is what the caller wrote.
	noErr(t, s.SaveCheckpoint(t.Context(), checkpoint("cp-1", "s", baseTime)), "SaveCheckpoint again")
	got, err := s.GetCheckpoint(t.Context(), "cp-1")
	noErr(t, err, "GetCheckpoint")
	equal(t, "claimant after SaveCheckpoint", "", got.ClaimedBy)
	_, err = s.ClaimCheckpoint(t.Context(), "cp-1", "b", baseTime, baseTime+60_000)
	noErr(t, err, "ClaimCheckpoint after SaveCheckpoint")
	_, err = s.DeleteCheckpoint(t.Context(), "cp-1")
	noErr(t, err, "DeleteCheckpoint of a claimed checkpoint")
	_, err = s.ClaimCheckpoint(t.Context(), "cp-1", "c", baseTime, baseTime+60_000)
	isErr(t, err, core.ErrCheckpointNotFound, "ClaimCheckpoint after DeleteCheckpoint")
}

// isCode reports whether err is a *core.BreadError with code.
func isCode(err error, code string) bool {
	var be *core.BreadError
	return errors.As(err, &be) && be.Code == code
}
