package engine_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// foldLog is the memory store as a SQL store looks to the engine: a crumb
// log written by the choke point's writer (not inline) whose run writes
// log crumbs in their own commit (core.RunCrumbWriter). It lists what each
// write logged, and can cut the end's write (endFault).
type foldLog struct {
	*memory.Store
	mu       sync.Mutex
	appends  [][]string // the types of each AppendCrumbs
	writes   [][]string // the types of each WriteRun's crumbs
	endFault func(s *foldLog, w core.RunWrite) (bool, error, bool)
}

func (s *foldLog) AppendsInline() bool        { return false }
func (s *foldLog) RunCrumbLog() core.CrumbLog { return s }
func (s *foldLog) types(es []core.CrumbLogEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Type
	}
	return out
}

func (s *foldLog) AppendCrumbs(ctx context.Context, entries []core.CrumbLogEntry) error {
	s.mu.Lock()
	s.appends = append(s.appends, s.types(entries))
	s.mu.Unlock()
	return s.Store.AppendCrumbs(ctx, entries)
}

func (s *foldLog) WriteRun(ctx context.Context, w core.RunWrite) (bool, error) {
	s.mu.Lock()
	s.writes = append(s.writes, s.types(w.Crumbs))
	fault := s.endFault
	s.mu.Unlock()
	if fault != nil && w.Owner != "" {
		if ok, err, handled := fault(s, w); handled {
			return ok, err
		}
	}
	return s.Store.WriteRun(ctx, w)
}

func (s *foldLog) seen() (appends, writes [][]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.appends), slices.Clone(s.writes)
}

var errCut = &core.BreadError{Code: core.CodeStoreUnavailable, Message: "FATAL: terminating connection due to administrator command (SQLSTATE 57P01)"}

// A short run on a store that logs crumbs with its run writes commits
// twice and appends no crumb of its own: agent:run:start goes with its
// start, its text and agent:run:end with its end. The log stays gap-free
// and in order whatever becomes of the end write: cut before it landed
// (the run fails, and its agent:error takes the seq agent:run:end had), cut
// after it landed (the run ends as written), or refused because another
// instance took the run (nothing of the end is logged; the text is, by the
// writer, as before).
func TestARunsCrumbsGoWithItsWrites(t *testing.T) {
	for _, c := range []struct {
		name        string
		fault       func(s *foldLog, w core.RunWrite) (bool, error, bool)
		wantErr     string
		wantLog     [][]string // one of these
		wantWrites  [][]string
		altWrites   [][]string // or these
		wantAppends []string   // every AppendCrumbs together
		anyAppends  bool       // the writer may or may not append
		wantRecord  core.RunStatus
	}{
		{
			name:       "committed",
			wantLog:    [][]string{{core.TypeAgentRunStart, core.TypeTextDelta, core.TypeAgentRunEnd}},
			wantWrites: [][]string{{core.TypeAgentRunStart}, {core.TypeTextDelta, core.TypeAgentRunEnd}},
			wantRecord: core.RunCompleted,
		},
		{
			name: "cut before it landed",
			fault: func(s *foldLog, w core.RunWrite) (bool, error, bool) {
				return false, errCut, true
			},
			wantErr: core.CodeStoreUnavailable,
			wantLog: [][]string{{core.TypeAgentRunStart, core.TypeTextDelta, core.TypeAgentError}},
			// The failed end tries its record with its crumbs too (the text
			// with it unless the writer took it first); cut, its record is
			// written alone (records.ended), the crumbs by the writer.
			wantWrites:  [][]string{{core.TypeAgentRunStart}, {core.TypeTextDelta, core.TypeAgentRunEnd}, {core.TypeTextDelta, core.TypeAgentError}},
			altWrites:   [][]string{{core.TypeAgentRunStart}, {core.TypeTextDelta, core.TypeAgentRunEnd}, {core.TypeAgentError}},
			wantAppends: []string{core.TypeTextDelta, core.TypeAgentError},
			wantRecord:  core.RunFailed,
		},
		{
			name: "refused for its crumbs",
			fault: func(s *foldLog, w core.RunWrite) (bool, error, bool) {
				if len(w.Crumbs) > 0 {
					return false, &core.BreadError{Code: core.CodeValidationError, Message: "the crumb log already holds seq 2"}, true
				}
				return false, nil, false
			},
			// The answer and the record again without the crumbs, which
			// the writer appends.
			wantLog:     [][]string{{core.TypeAgentRunStart, core.TypeTextDelta, core.TypeAgentRunEnd}},
			wantWrites:  [][]string{{core.TypeAgentRunStart}, {core.TypeTextDelta, core.TypeAgentRunEnd}, {}},
			wantAppends: []string{core.TypeTextDelta, core.TypeAgentRunEnd},
			wantRecord:  core.RunCompleted,
		},
		{
			name: "cut after it landed",
			fault: func(s *foldLog, w core.RunWrite) (bool, error, bool) {
				if _, err := s.Store.WriteRun(context.Background(), w); err != nil {
					return false, err, true
				}
				return false, errCut, true
			},
			wantLog:    [][]string{{core.TypeAgentRunStart, core.TypeTextDelta, core.TypeAgentRunEnd}},
			wantWrites: [][]string{{core.TypeAgentRunStart}, {core.TypeTextDelta, core.TypeAgentRunEnd}},
			wantRecord: core.RunCompleted,
		},
		{
			name: "taken by another instance",
			fault: func(s *foldLog, w core.RunWrite) (bool, error, bool) {
				taken := *w.Run
				taken.Status, taken.Owner, taken.LeaseUntil = core.RunRunning, "another-instance", core.NowMillis()+60_000
				if err := s.Store.PutRun(context.Background(), taken); err != nil {
					return false, err, true
				}
				return false, nil, false
			},
			wantErr: core.CodeRunLost,
			// The text goes to the writer, which may find the run's log
			// closed by its quiet end before it writes it; never the end.
			wantLog:    [][]string{{core.TypeAgentRunStart}, {core.TypeAgentRunStart, core.TypeTextDelta}},
			wantWrites: [][]string{{core.TypeAgentRunStart}, {core.TypeTextDelta, core.TypeAgentRunEnd}},
			anyAppends: true,
			wantRecord: core.RunRunning,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := &foldLog{Store: memory.New(), endFault: c.fault}
				if !core.NewStorage(store).WritesRunCrumbs() {
					t.Fatal("the test store does not log crumbs with its run writes")
				}
				tb := newTestbed(t, modeltest.New(modeltest.Text("done")), []*core.Agent{textAgent("a")}, func(cfg *engine.Config) { cfg.Store = store })
				cs, err := tb.run(t, "a", "hi", core.RunOptions{})
				code := ""
				if err != nil {
					code = core.AsBreadError(err, "").Code
				}
				if code != c.wantErr {
					t.Fatalf("the run's error: %v, want code %q", err, c.wantErr)
				}
				runID := cs[0].Base().RunID
				logged, err := store.GetCrumbs(context.Background(), runID, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				var types []string
				for i, e := range logged {
					if e.Seq != int64(i+1) {
						t.Fatalf("entry %d has seq %d: the log is not gap-free", i, e.Seq)
					}
					types = append(types, e.Type)
				}
				if !slices.ContainsFunc(c.wantLog, func(want []string) bool { return slices.Equal(types, want) }) {
					t.Errorf("logged %v, want %v", types, c.wantLog)
				}
				// What the client saw is what the log holds, seq for seq.
				for _, cr := range cs {
					b := cr.Base()
					if core.IsDelta(cr.CrumbType()) || b.Seq == 0 || int(b.Seq) > len(logged) {
						continue
					}
					if logged[b.Seq-1].Type != cr.CrumbType() {
						t.Errorf("the client got %s as seq %d, the log holds %s there", cr.CrumbType(), b.Seq, logged[b.Seq-1].Type)
					}
				}
				appends, writes := store.seen()
				if !slices.EqualFunc(writes, c.wantWrites, slices.Equal) && (c.altWrites == nil || !slices.EqualFunc(writes, c.altWrites, slices.Equal)) {
					t.Errorf("run writes logged %v, want %v", writes, c.wantWrites)
				}
				if all := slices.Concat(appends...); !c.anyAppends && !slices.Equal(all, c.wantAppends) && !(len(all) == 0 && len(c.wantAppends) == 0) {
					t.Errorf("appends %v, want %v", appends, c.wantAppends)
				}
				rec, err := store.GetRun(context.Background(), runID)
				if err != nil {
					t.Fatal(err)
				}
				if rec.Status != c.wantRecord {
					t.Errorf("record %s, want %s", rec.Status, c.wantRecord)
				}
			})
		})
	}
}
