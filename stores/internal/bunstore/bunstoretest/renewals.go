package bunstoretest

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

// Renewing is what RenewalsSkipLockedRows renews on.
type Renewing interface {
	core.RunStore
	core.CheckpointStore
	CreateSession(ctx context.Context, s core.NewSession) (core.Session, error)
}

// RenewalsSkipLockedRows checks that RenewRunLeases and
// RenewCheckpointClaims never wait for a row another transaction holds
// locked: they renew the others and leave that one to the next renewal. A
// renewal that waited could close a cycle with a batch of the committer
// locking the same owner's rows in another order, and one of the two would
// be aborted as deadlocked. db is a connection to s's database with its
// tables in reach (s's schema on the search path, s's database).
func RenewalsSkipLockedRows(t *testing.T, s Renewing, db *sql.DB) {
	ctx := t.Context()
	now := time.Now().UnixMilli()
	if _, err := s.CreateSession(ctx, core.NewSession{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"r1", "r2", "r3"} {
		err := s.PutRun(ctx, core.RunRecord{ID: id, AgentID: "a", SessionID: "s", Status: core.RunRunning,
			Owner: "o", LeaseUntil: now, CreatedAt: now, UpdatedAt: now})
		if err != nil {
			t.Fatal(err)
		}
		cp := core.CheckpointRecord{ID: "cp-" + id, AgentID: "a", RunID: id, SessionID: "s", CreatedAt: now}
		if err := s.SaveCheckpoint(ctx, cp); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ClaimCheckpoint(ctx, cp.ID, "o", now, now+1); err != nil {
			t.Fatal(err)
		}
	}

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, lock := range []string{
		"SELECT id FROM bread_runs WHERE id = 'r2' FOR UPDATE",
		"SELECT id FROM bread_checkpoints WHERE id = 'cp-r2' FOR UPDATE",
	} {
		if _, err := tx.ExecContext(ctx, lock); err != nil {
			t.Fatalf("%s: %v", lock, err)
		}
	}

	// A renewal that waited would wait for the transaction above, which
	// ends only after it: the deadline turns that wait into the failure.
	renew := func(what string, fn func(ctx context.Context) (int, error), want int) {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		n, err := fn(wctx)
		if err != nil || n != want {
			t.Fatalf("%s: renewed %d (%v), want %d", what, n, err, want)
		}
	}
	until := now + 60_000
	runs := func(ctx context.Context) (int, error) { return s.RenewRunLeases(ctx, "o", until) }
	claims := func(ctx context.Context) (int, error) { return s.RenewCheckpointClaims(ctx, "o", until) }
	renew("RenewRunLeases with r2's row locked", runs, 2)
	renew("RenewCheckpointClaims with cp-r2's row locked", claims, 2)
	if r, err := s.GetRun(ctx, "r1"); err != nil || r.LeaseUntil != until {
		t.Fatalf("r1's lease: %d (%v), want %d", r.LeaseUntil, err, until)
	}

	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	renew("RenewRunLeases once the lock is gone", runs, 3)
	renew("RenewCheckpointClaims once the lock is gone", claims, 3)
	if r, err := s.GetRun(ctx, "r2"); err != nil || r.LeaseUntil != until {
		t.Fatalf("r2's lease: %d (%v), want %d", r.LeaseUntil, err, until)
	}
}
