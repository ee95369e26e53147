package storetest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
)

func joinCases() []testCase {
	return []testCase{
		{name: "the call that settles the last slot completes the join", run: testJoinComplete},
		{name: "settling a slot twice keeps the first output and never completes", run: testJoinTwice},
		{name: "the completer's retry completes again, every other slot never", run: testJoinCompleterRetry},
		{name: "slots out of range are refused", run: testJoinRange},
		{name: "of concurrent settlers one slot completes, with every output", run: testJoinRace},
	}
}

func testJoinComplete(t *testing.T, s core.BreadStore) {
	ctx := t.Context()
	for _, slot := range []int{2, 0} {
		outs, complete, err := s.SettleJoin(ctx, "join-1", 3, slot, json.RawMessage(fmt.Sprintf(`{"slot":%d}`, slot)))
		noErr(t, err, "SettleJoin(%d)", slot)
		if complete || outs != nil {
			t.Fatalf("slot %d completed a join with a slot open: %s", slot, outs)
		}
	}
	outs, complete, err := s.SettleJoin(ctx, "join-1", 3, 1, json.RawMessage(`{"slot":1, "big": 12345678901234567890}`))
	noErr(t, err, "SettleJoin(1)")
	equal(t, "complete", true, complete)
	want := []string{`{"slot":0}`, `{"slot":1, "big": 12345678901234567890}`, `{"slot":2}`}
	if len(outs) != 3 {
		t.Fatalf("outputs %s, want %d", outs, len(want))
	}
	for i := range want {
		equal(t, fmt.Sprintf("output %d (byte for byte)", i), want[i], string(outs[i]))
	}
	// Another join of the same store is independent.
	_, complete, err = s.SettleJoin(ctx, "join-2", 1, 0, json.RawMessage(`null`))
	noErr(t, err, "SettleJoin(join-2)")
	equal(t, "a one-slot join completes at once", true, complete)
}

func testJoinTwice(t *testing.T, s core.BreadStore) {
	ctx := t.Context()
	_, _, err := s.SettleJoin(ctx, "j", 2, 0, json.RawMessage(`"first"`))
	noErr(t, err, "SettleJoin")
	_, complete, err := s.SettleJoin(ctx, "j", 2, 0, json.RawMessage(`"second"`))
	noErr(t, err, "SettleJoin again")
	equal(t, "a repeated slot completes", false, complete)
	outs, complete, err := s.SettleJoin(ctx, "j", 2, 1, json.RawMessage(`"other"`))
	noErr(t, err, "SettleJoin(1)")
	equal(t, "complete", true, complete)
	equal(t, "slot 0 keeps its first output", `"first"`, string(outs[0]))
	_, complete, err = s.SettleJoin(ctx, "j", 2, 0, json.RawMessage(`"late"`))
	noErr(t, err, "SettleJoin after completion")
	equal(t, "a slot that did not complete the join completes it later", false, complete)
}

// testJoinCompleterRetry: the slot whose settlement completed the join may
// settle again (its process died before carrying the composition on) and
// gets the join's first outputs again; no other slot ever does.
func testJoinCompleterRetry(t *testing.T, s core.BreadStore) {
	ctx := t.Context()
	_, _, err := s.SettleJoin(ctx, "j", 2, 1, json.RawMessage(`"one"`))
	noErr(t, err, "SettleJoin(1)")
	_, complete, err := s.SettleJoin(ctx, "j", 2, 0, json.RawMessage(`"zero"`))
	noErr(t, err, "SettleJoin(0)")
	equal(t, "slot 0 completes", true, complete)
	for range 2 {
		outs, complete, err := s.SettleJoin(ctx, "j", 2, 0, json.RawMessage(`"zero again"`))
		noErr(t, err, "SettleJoin(0) retried")
		equal(t, "the completer's retry completes", true, complete)
		if len(outs) != 2 {
			t.Fatalf("the completer's retry got outputs %s, want 2", outs)
		}
		equal(t, "slot 0 keeps its first output", `"zero"`, string(outs[0]))
		equal(t, "slot 1's output", `"one"`, string(outs[1]))
	}
	_, complete, err = s.SettleJoin(ctx, "j", 2, 1, json.RawMessage(`"one again"`))
	noErr(t, err, "SettleJoin(1) again")
	equal(t, "a slot that did not complete the join", false, complete)
}

func testJoinRange(t *testing.T, s core.BreadStore) {
	for _, c := range []struct{ slots, slot int }{{2, 2}, {2, -1}, {0, 0}} {
		_, _, err := s.SettleJoin(t.Context(), "j", c.slots, c.slot, json.RawMessage(`1`))
		isErr(t, err, core.ErrValidation, "SettleJoin(slots %d, slot %d)", c.slots, c.slot)
	}
}

func testJoinRace(t *testing.T, s core.BreadStore) {
	const slots, rounds = 6, 3
	for round := range rounds {
		id := fmt.Sprintf("join-%d", round)
		var mu sync.Mutex
		var completions [][]json.RawMessage
		completers := map[int]bool{}
		var wg sync.WaitGroup
		for slot := range slots {
			// Each slot settled twice at once: a duplicate must not count,
			// but the completer's own duplicate is its retry and completes too.
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					outs, complete, err := s.SettleJoin(t.Context(), id, slots, slot, json.RawMessage(fmt.Sprint(slot)))
					if err != nil {
						t.Errorf("SettleJoin(%d): %v", slot, err)
						return
					}
					if complete {
						mu.Lock()
						completions = append(completions, outs)
						completers[slot] = true
						mu.Unlock()
					}
				}()
			}
		}
		wg.Wait()
		if len(completers) != 1 || len(completions) == 0 {
			t.Fatalf("round %d: completed by slots %v, want exactly one slot", round, completers)
		}
		for _, outs := range completions {
			for slot, out := range outs {
				if string(out) != fmt.Sprint(slot) {
					t.Errorf("round %d: output %d is %s: the completer missed a sibling's output", round, slot, out)
				}
			}
		}
	}
}
