package bunstoretest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

// FencedInsertsAtOnce checks that many writes of records not written yet,
// each fenced by a token no record holds (the engine's insert-only write of
// a background run's queued record), made at once, all succeed. On MySQL
// each such write's locking read locks the gap its key falls in, and two
// of them inserting into one gap deadlock; the committer runs a write
// whose transaction met a conflict again (Dialect.Conflict) instead of
// failing it with STORE_ERROR, which a client saw as HTTP 500.
func FencedInsertsAtOnce(t *testing.T, s interface {
	Renewing
	core.RunLister
}) {
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, core.NewSession{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	const n = 64
	now := time.Now().UnixMilli()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprintf("queued-%02d", i)
			rec := core.RunRecord{ID: id, AgentID: "a", SessionID: "s", Status: core.RunQueued, CreatedAt: now, UpdatedAt: now}
			errs[i] = s.PutRun(core.WithRunFence(ctx, core.RunFence{RunID: id, Token: "queued:" + id}), rec)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	}
	runs, err := s.ListRuns(ctx, core.RunFilter{SessionID: "s"})
	if err != nil || len(runs) != n {
		t.Fatalf("%d records (%v), want %d", len(runs), err, n)
	}
}
