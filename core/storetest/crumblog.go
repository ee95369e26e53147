package storetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
)

func crumbLogCases() []testCase {
	return []testCase{
		{name: "append and read back in seq order", needs: needsCrumbLog, run: testCrumbsReadBack},
		{name: "GetCrumbs honours afterSeq and limit", needs: needsCrumbLog, run: testCrumbsWindow},
		{name: "runs are isolated", needs: needsCrumbLog, run: testCrumbsIsolation},
		{name: "MaxCrumbSeq is 0 for an unknown run and the max otherwise", needs: needsCrumbLog, run: testMaxCrumbSeq},
		{name: "entries without a session anchor", needs: needsCrumbLog, run: testCrumbsNoSession},
		{name: "every crumb type round-trips byte for byte", needs: needsCrumbLog, run: testCrumbsEveryType},
		{name: "concurrent appends to different runs", needs: needsCrumbLog, run: testCrumbsConcurrent},
	}
}

// assertCrumbSeqs fails unless the run's log holds exactly want, in order.
func assertCrumbSeqs(t *testing.T, cl core.CrumbLog, runID string, want []int64) {
	t.Helper()
	got, err := cl.GetCrumbs(t.Context(), runID, 0, 0)
	noErr(t, err, "GetCrumbs(%s)", runID)
	equalList(t, "seqs of run "+runID, want, seqs(got))
}

// assertEntry fails unless got is want read back: every field equal and the
// crumb of the same type re-encoding to the same bytes.
func assertEntry(t *testing.T, want, got core.CrumbLogEntry) {
	t.Helper()
	what := fmt.Sprintf("entry %s/%d", want.RunID, want.Seq)
	equal(t, what+" RunID", want.RunID, got.RunID)
	equal(t, what+" Seq", want.Seq, got.Seq)
	equal(t, what+" SessionID", want.SessionID, got.SessionID)
	equal(t, what+" AgentID", want.AgentID, got.AgentID)
	equal(t, what+" Type", want.Type, got.Type)
	equal(t, what+" CreatedAt", want.CreatedAt, got.CreatedAt)
	if got.Crumb == nil {
		t.Errorf("%s: the crumb was lost", what)
		return
	}
	if reflect.TypeOf(got.Crumb) != reflect.TypeOf(want.Crumb) {
		t.Errorf("%s: crumb type %T, want %T", what, got.Crumb, want.Crumb)
		return
	}
	w, err := json.Marshal(want.Crumb)
	noErr(t, err, "encode the original %s", want.Type)
	g, err := json.Marshal(got.Crumb)
	noErr(t, err, "encode the read-back %s", want.Type)
	if !bytes.Equal(w, g) {
		t.Errorf("%s (%s) does not re-encode to the same bytes:\nwant %s\n got %s", what, want.Type, w, g)
	}
}

func testCrumbsReadBack(t *testing.T, s core.BreadStore) {
	cl := capability[core.CrumbLog](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	got, err := cl.GetCrumbs(t.Context(), "r1", 0, 0)
	noErr(t, err, "GetCrumbs of an unknown run")
	equal(t, "entries of an unknown run", 0, len(got))

	want := textEntries("r1", "s", 1, 3)
	noErr(t, cl.AppendCrumbs(t.Context(), want[:1]), "AppendCrumbs")
	noErr(t, cl.AppendCrumbs(t.Context(), want[1:]), "AppendCrumbs")
	noErr(t, cl.AppendCrumbs(t.Context(), nil), "AppendCrumbs of no entries")
	got, err = cl.GetCrumbs(t.Context(), "r1", 0, 0)
	noErr(t, err, "GetCrumbs")
	if len(got) != len(want) {
		t.Fatalf("GetCrumbs: want %d entries, got %d", len(want), len(got))
	}
	for i := range want {
		assertEntry(t, want[i], got[i])
	}

	// A batch out of seq order still reads back in seq order.
	shuffled := []core.CrumbLogEntry{textEntry("r2", 2, "s"), textEntry("r2", 1, "s"), textEntry("r2", 3, "s")}
	noErr(t, cl.AppendCrumbs(t.Context(), shuffled), "AppendCrumbs out of order")
	assertCrumbSeqs(t, cl, "r2", []int64{1, 2, 3})
}

func testCrumbsWindow(t *testing.T, s core.BreadStore) {
	cl := capability[core.CrumbLog](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	noErr(t, cl.AppendCrumbs(t.Context(), textEntries("r1", "s", 1, 5)), "AppendCrumbs")
	cases := []struct {
		afterSeq int64
		limit    int
		want     []int64
	}{
		{0, 0, []int64{1, 2, 3, 4, 5}},
		{-1, 0, []int64{1, 2, 3, 4, 5}},
		{0, -1, []int64{1, 2, 3, 4, 5}},
		{2, 0, []int64{3, 4, 5}},
		{1, 2, []int64{2, 3}},
		{3, 1, []int64{4}},
		{0, 10, []int64{1, 2, 3, 4, 5}},
		{4, 10, []int64{5}},
		{5, 0, nil},
		{99, 3, nil},
	}
	for _, c := range cases {
		got, err := cl.GetCrumbs(t.Context(), "r1", c.afterSeq, c.limit)
		noErr(t, err, "GetCrumbs(afterSeq=%d, limit=%d)", c.afterSeq, c.limit)
		equalList(t, fmt.Sprintf("GetCrumbs(afterSeq=%d, limit=%d)", c.afterSeq, c.limit), c.want, seqs(got))
	}
}

func testCrumbsIsolation(t *testing.T, s core.BreadStore) {
	cl := capability[core.CrumbLog](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	batch := append(textEntries("r1", "s", 1, 1), textEntries("r2", "s", 1, 2)...)
	noErr(t, cl.AppendCrumbs(t.Context(), batch), "AppendCrumbs")
	assertCrumbSeqs(t, cl, "r1", []int64{1})
	assertCrumbSeqs(t, cl, "r2", []int64{1, 2})
	got, err := cl.GetCrumbs(t.Context(), "r2", 0, 0)
	noErr(t, err, "GetCrumbs")
	for _, e := range got {
		equal(t, "RunID of an entry of r2", "r2", e.RunID)
	}
	assertCrumbSeqs(t, cl, "r", nil)
}

func testMaxCrumbSeq(t *testing.T, s core.BreadStore) {
	cl := capability[core.CrumbLog](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	n, err := cl.MaxCrumbSeq(t.Context(), "nope")
	noErr(t, err, "MaxCrumbSeq of an unknown run")
	equal(t, "MaxCrumbSeq of an unknown run", int64(0), n)
	noErr(t, cl.AppendCrumbs(t.Context(), []core.CrumbLogEntry{textEntry("r1", 1, "s"), textEntry("r1", 7, "s")}), "AppendCrumbs")
	noErr(t, cl.AppendCrumbs(t.Context(), []core.CrumbLogEntry{textEntry("r2", 40, "s")}), "AppendCrumbs")
	n, err = cl.MaxCrumbSeq(t.Context(), "r1")
	noErr(t, err, "MaxCrumbSeq")
	equal(t, "MaxCrumbSeq(r1)", int64(7), n)
	noErr(t, cl.AppendCrumbs(t.Context(), []core.CrumbLogEntry{textEntry("r1", 8, "s")}), "AppendCrumbs")
	n, err = cl.MaxCrumbSeq(t.Context(), "r1")
	noErr(t, err, "MaxCrumbSeq")
	equal(t, "MaxCrumbSeq(r1) after another append", int64(8), n)
}

func testCrumbsNoSession(t *testing.T, s core.BreadStore) {
	cl := capability[core.CrumbLog](t, s)
	want := textEntry("r1", 1, "")
	noErr(t, cl.AppendCrumbs(t.Context(), []core.CrumbLogEntry{want}), "AppendCrumbs without a session")
	got, err := cl.GetCrumbs(t.Context(), "r1", 0, 0)
	noErr(t, err, "GetCrumbs")
	if len(got) != 1 {
		t.Fatalf("GetCrumbs: want 1 entry, got %d", len(got))
	}
	assertEntry(t, want, got[0])
}

func testCrumbsEveryType(t *testing.T, s core.BreadStore) {
	cl := capability[core.CrumbLog](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	crumbs := fullCrumbs("r1", "s")
	var want []core.CrumbLogEntry
	for _, typ := range core.CrumbTypes() {
		c, ok := crumbs[typ]
		if !ok {
			t.Fatalf("storetest has no fixture for crumb type %q: add one to fullCrumbs", typ)
		}
		want = append(want, core.CrumbLogEntry{
			RunID: "r1", Seq: c.Base().Seq, SessionID: "s", AgentID: c.Base().AgentID,
			Type: typ, Crumb: c, CreatedAt: c.Base().Timestamp,
		})
	}
	half := len(want) / 2
	noErr(t, cl.AppendCrumbs(t.Context(), want[:half]), "AppendCrumbs")
	noErr(t, cl.AppendCrumbs(t.Context(), want[half:]), "AppendCrumbs")
	got, err := cl.GetCrumbs(t.Context(), "r1", 0, 0)
	noErr(t, err, "GetCrumbs")
	if len(got) != len(want) {
		t.Fatalf("GetCrumbs: want %d entries, got %d", len(want), len(got))
	}
	for i := range want {
		assertEntry(t, want[i], got[i])
	}
}

func testCrumbsConcurrent(t *testing.T, s core.BreadStore) {
	cl := capability[core.CrumbLog](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	const writers, perWriter = 8, 40
	var wg sync.WaitGroup
	for w := range writers {
		runID := fmt.Sprintf("run-%d", w)
		wg.Go(func() {
			for seq := int64(1); seq <= perWriter; seq += 4 {
				// Alternate single entries and small batches.
				if err := cl.AppendCrumbs(t.Context(), textEntries(runID, "s", seq, seq)); err != nil {
					t.Errorf("AppendCrumbs(%s, %d): %v", runID, seq, err)
					return
				}
				if err := cl.AppendCrumbs(t.Context(), textEntries(runID, "s", seq+1, seq+3)); err != nil {
					t.Errorf("AppendCrumbs(%s, %d..%d): %v", runID, seq+1, seq+3, err)
					return
				}
			}
		})
	}
	wg.Wait()
	want := make([]int64, perWriter)
	for i := range want {
		want[i] = int64(i + 1)
	}
	for w := range writers {
		assertCrumbSeqs(t, cl, fmt.Sprintf("run-%d", w), want)
	}
}
