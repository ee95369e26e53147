package engine_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// cutLog fails the first n crumb-log appends with STORE_UNAVAILABLE, as a
// connection terminated under the write (pg_terminate_backend) does;
// committed says whether the write landed before its answer was lost.
type cutLog struct {
	*memory.Store
	mu        sync.Mutex
	n         int
	committed bool
}

func (s *cutLog) AppendCrumbs(ctx context.Context, entries []core.CrumbLogEntry) error {
	s.mu.Lock()
	cut := s.n > 0
	if cut {
		s.n--
	}
	s.mu.Unlock()
	if !cut {
		return s.Store.AppendCrumbs(ctx, entries)
	}
	if s.committed {
		if err := s.Store.AppendCrumbs(ctx, entries); err != nil {
			return err
		}
	}
	return &core.BreadError{Code: core.CodeStoreUnavailable, Message: "FATAL: terminating connection due to administrator command (SQLSTATE 57P01)"}
}

// AppendsInline reports false: the log is written by the engine's writer
// goroutine, as a SQL store's is.
func (s *cutLog) AppendsInline() bool { return false }

// TestACrumbLogWriteCutOffIsRetried is a violation the chaos harness found
// (issue 31): a crumb-log write that met a terminated PostgreSQL
// connection disabled the run's log for the rest of the run, so the run
// completed with no terminal crumb logged and a replay of it never ended.
// The write is retried, and a retry finds a write that landed before its
// answer was lost.
func TestACrumbLogWriteCutOffIsRetried(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cuts      int
		committed bool
	}{
		{"the write did not land, twice", 2, false},
		{"the write landed but its answer was lost", 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := &cutLog{Store: memory.New(), n: tc.cuts, committed: tc.committed}
				tb := newTestbed(t, modeltest.New(modeltest.Text("done")), []*core.Agent{textAgent("a")}, func(c *engine.Config) { c.Store = store })
				cs, err := tb.run(t, "a", "hi", core.RunOptions{})
				if err != nil {
					t.Fatal(err)
				}
				logged, err := store.GetCrumbs(context.Background(), cs[0].Base().RunID, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				if len(logged) == 0 || logged[len(logged)-1].Type != core.TypeAgentRunEnd {
					t.Fatalf("the log after a cut write: %d entries, want it to end with agent:run:end", len(logged))
				}
				for i, e := range logged {
					if e.Seq != int64(i+1) {
						t.Fatalf("entry %d has seq %d: the log is not gap-free", i, e.Seq)
					}
				}
			})
		})
	}
}
