package memory

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
)

func entry(run string, seq int64, session string) core.CrumbLogEntry {
	return core.CrumbLogEntry{
		RunID: run, Seq: seq, SessionID: session, AgentID: "a", Type: core.TypeTextDelta,
		Crumb: &core.TextDelta{CrumbBase: core.CrumbBase{AgentID: "a", RunID: run, Seq: seq}, Delta: "x"}, CreatedAt: 1,
	}
}

func seqsOf(entries []core.CrumbLogEntry) []int64 {
	out := make([]int64, len(entries))
	for i, e := range entries {
		out[i] = e.Seq
	}
	return out
}

func TestAppendCrumbsRejectsBadBatchesWhole(t *testing.T) {
	ctx := t.Context()
	s := New()
	if err := s.AppendCrumbs(ctx, []core.CrumbLogEntry{entry("r", 1, ""), entry("r", 2, "")}); err != nil {
		t.Fatal(err)
	}
	noCrumb := entry("r", 9, "")
	noCrumb.Crumb = nil
	bad := map[string][]core.CrumbLogEntry{
		"seq already logged":  {entry("r", 3, ""), entry("r", 2, "")},
		"seq twice in batch":  {entry("r", 5, ""), entry("other", 1, ""), entry("r", 5, "")},
		"entry without a run": {entry("r", 6, ""), entry("", 7, "")},
		"entry without crumb": {entry("r", 8, ""), noCrumb},
	}
	for name, batch := range bad {
		err := s.AppendCrumbs(ctx, batch)
		if !errors.Is(err, core.ErrValidation) {
			t.Errorf("%s: want VALIDATION_ERROR, got %v", name, err)
		}
	}
	got, err := s.GetCrumbs(ctx, "r", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{1, 2}; !slices.Equal(seqsOf(got), want) {
		t.Errorf("a rejected batch left entries behind: run holds %v, want %v", seqsOf(got), want)
	}
	if n, _ := s.MaxCrumbSeq(ctx, "other"); n != 0 {
		t.Errorf("a rejected batch logged run other up to %d", n)
	}
}

// TestCrumbRunMatchesModel appends a run in random order and batch sizes,
// then checks every window against a sorted model.
func TestCrumbRunMatchesModel(t *testing.T) {
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(1, 2))
	s := New()
	const n = 3000
	order := rng.Perm(n)
	// Mostly increasing, as the choke point writes, with some disorder.
	slices.Sort(order[:n/2])
	for i := 0; i < n; {
		size := min(1+rng.IntN(40), n-i)
		var batch []core.CrumbLogEntry
		for _, p := range order[i : i+size] {
			batch = append(batch, entry("r", int64(p+1), "s"))
		}
		if err := s.AppendCrumbs(ctx, batch); err != nil {
			t.Fatalf("AppendCrumbs: %v", err)
		}
		i += size
	}
	model := make([]int64, n)
	for i := range model {
		model[i] = int64(i + 1)
	}
	for range 500 {
		after, limit := int64(rng.IntN(n+10))-5, rng.IntN(n/2)-10
		got, err := s.GetCrumbs(ctx, "r", after, limit)
		if err != nil {
			t.Fatal(err)
		}
		start := min(max(after, 0), n)
		want := model[start:]
		if limit > 0 && len(want) > limit {
			want = want[:limit]
		}
		if !slices.Equal(seqsOf(got), want) {
			t.Fatalf("GetCrumbs(after=%d, limit=%d): got %d entries %v..., want %d", after, limit, len(got), seqsOf(got)[:min(5, len(got))], len(want))
		}
	}
	if m, _ := s.MaxCrumbSeq(ctx, "r"); m != n {
		t.Errorf("MaxCrumbSeq = %d, want %d", m, n)
	}
}

// TestCrumbReadersDuringWrites exercises the unlocked copy in GetCrumbs
// under the race detector: every read is a gap-free prefix of the run.
func TestCrumbReadersDuringWrites(t *testing.T) {
	ctx := t.Context()
	s := New()
	if _, err := s.CreateSession(ctx, core.NewSession{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	const n = 5000
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		for seq := int64(1); seq <= n; seq++ {
			if err := s.AppendCrumbs(ctx, []core.CrumbLogEntry{entry("r", seq, "s")}); err != nil {
				t.Errorf("AppendCrumbs: %v", err)
				return
			}
		}
	})
	for range 3 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				got, err := s.GetCrumbs(ctx, "r", 0, 0)
				if err != nil {
					t.Errorf("GetCrumbs: %v", err)
					return
				}
				for i, e := range got {
					if e.Seq != int64(i+1) {
						t.Errorf("read %d entries with seq %d at position %d", len(got), e.Seq, i)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

func TestCascadeLeavesNoIndex(t *testing.T) {
	ctx := t.Context()
	s := New()
	for _, id := range []string{"a", "b"} {
		if _, err := s.CreateSession(ctx, core.NewSession{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	batch := []core.CrumbLogEntry{entry("ra", 1, "a"), entry("ra", 2, "a"), entry("rab", 1, "a"), entry("rab", 2, "b"), entry("rab", 3, "a")}
	if err := s.AppendCrumbs(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSession(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.runs["ra"]; ok {
		t.Error("a run whose entries all went with the session is still tracked")
	}
	if _, ok := s.sessionRuns["a"]; ok {
		t.Error("the deleted session is still indexed")
	}
	got, _ := s.GetCrumbs(ctx, "rab", 0, 0)
	if !slices.Equal(seqsOf(got), []int64{2}) {
		t.Errorf("run rab holds %v, want [2]", seqsOf(got))
	}
	// The session comes back under the same id: its new entries must be
	// indexed again, so a second delete cascades them too.
	if _, err := s.CreateSession(ctx, core.NewSession{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendCrumbs(ctx, []core.CrumbLogEntry{entry("rab", 4, "a")}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSession(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetCrumbs(ctx, "rab", 0, 0)
	if !slices.Equal(seqsOf(got), []int64{2}) {
		t.Errorf("after the second delete run rab holds %v, want [2]", seqsOf(got))
	}
}

// FuzzCrumbLog drives appends (any order, duplicates included) and reads
// from fuzz input and checks them against a model.
func FuzzCrumbLog(f *testing.F) {
	f.Add([]byte{1, 2, 3, 0x80, 2, 0x81, 1, 2})
	f.Add([]byte{5, 4, 3, 2, 1, 0x80, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		ctx := t.Context()
		s := New()
		model := map[int64]bool{}
		for i, op := range ops {
			if op&0x80 == 0 {
				seq := int64(op)
				err := s.AppendCrumbs(ctx, []core.CrumbLogEntry{entry("r", seq, "")})
				if model[seq] != (err != nil) {
					t.Fatalf("op %d: append seq %d: err %v, already logged %v", i, seq, err, model[seq])
				}
				model[seq] = true
				continue
			}
			after, limit := int64(op&0x3f)-2, int(op>>6&1)*3
			got, err := s.GetCrumbs(ctx, "r", after, limit)
			if err != nil {
				t.Fatal(err)
			}
			var want []int64
			for seq := range model {
				if seq > after {
					want = append(want, seq)
				}
			}
			slices.Sort(want)
			if limit > 0 && len(want) > limit {
				want = want[:limit]
			}
			if !slices.Equal(seqsOf(got), want) {
				t.Fatalf("op %d: GetCrumbs(%d, %d) = %v, want %v", i, after, limit, seqsOf(got), want)
			}
		}
	})
}

// A short run's log is one allocation: the crumbRun holds its first chunk.
func TestAShortRunsLogIsOneAllocation(t *testing.T) {
	entries := []core.CrumbLogEntry{
		{RunID: "r", Seq: 1, Type: core.TypeAgentRunStart, Crumb: &core.AgentRunStart{}},
		{RunID: "r", Seq: 2, Type: core.TypeTextDelta, Crumb: &core.TextDelta{Delta: "hi"}},
		{RunID: "r", Seq: 3, Type: core.TypeAgentRunEnd, Crumb: &core.AgentRunEnd{}},
	}
	got := testing.AllocsPerRun(100, func() {
		r := &crumbRun{}
		for i := range entries {
			r.push(&entries[i])
		}
	})
	if got != 1 {
		t.Fatalf("%v allocations for a three-entry log, want 1", got)
	}
}

// A rebuild never reuses the run's first chunk: a reader copying the
// entries it saw after releasing the lock would see them change.
func TestARebuildLeavesTheFirstChunkAlone(t *testing.T) {
	r := &crumbRun{}
	for seq := int64(2); seq <= 5; seq++ {
		r.push(&core.CrumbLogEntry{RunID: "r", Seq: seq, Type: core.TypeTextDelta, Crumb: &core.TextDelta{}})
	}
	seen := r.chunks[0] // what a reader holds, unlocked
	want := slices.Clone(seen)
	r.merge([]core.CrumbLogEntry{{RunID: "r", Seq: 1, Type: core.TypeAgentRunStart, Crumb: &core.AgentRunStart{}}})
	for seq := int64(6); seq <= 9; seq++ {
		r.push(&core.CrumbLogEntry{RunID: "r", Seq: seq, Type: core.TypeTextDelta, Crumb: &core.TextDelta{}})
	}
	if !slices.Equal(seen, want) {
		t.Fatalf("a reader's entries changed under it: %+v, want %+v", seen, want)
	}
	if all := r.all(); len(all) != 9 || all[0].Seq != 1 || all[8].Seq != 9 {
		t.Fatalf("after the merge: %+v", all)
	}
}
