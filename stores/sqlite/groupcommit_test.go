package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/sqlite"
)

// blockedStore returns a migrated store whose committer is stuck in its
// next transaction's BEGIN behind a write lock another connection holds,
// and the function that releases that lock.
func blockedStore(t *testing.T) (*sqlite.Store, func()) {
	t.Helper()
	s, err := sqlite.New(sqlite.Options{Path: filepath.Join(t.TempDir(), "bread.db"), BusyTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	conn, err := s.DB().DB.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	return s, func() {
		_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		_ = conn.Close()
	}
}

// waitTaken waits until the committer has taken a write and holds a
// connection for it, stuck behind the lock: the pool then has two
// connections in use, the lock's and the committer's. A database lock
// announces no waiter, so this polls the pool's count; the ten seconds
// only bound a test that fails.
func waitTaken(t *testing.T, s *sqlite.Store) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); s.DB().DB.Stats().InUse < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the committer never took the write")
		}
		time.Sleep(time.Millisecond)
	}
}

// createAsync starts CreateSession(id) and returns where its error lands.
func createAsync(ctx context.Context, s *sqlite.Store, id string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := s.CreateSession(ctx, core.NewSession{ID: id})
		done <- err
	}()
	return done
}

// A write whose context ends while it waits in the queue is withdrawn: it
// reports the context's error at once and is never committed. The write
// already taken commits once the database lets it.
func TestGroupCommitWithdrawsACancelledWrite(t *testing.T) {
	s, release := blockedStore(t)
	first := createAsync(t.Context(), s, "first")
	waitTaken(t, s)
	// Queued or about to be, the second write is withdrawn either way:
	// do queues it, then sees its context ended.
	ctx, cancel := context.WithCancel(t.Context())
	second := createAsync(ctx, s, "second")
	cancel()
	select {
	case err := <-second:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled queued write: want context.Canceled, got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled queued write still waits for the batch before it")
	}
	release()
	if err := <-first; err != nil {
		t.Fatalf("the write in flight: %v", err)
	}
	if _, err := s.GetSession(t.Context(), "first"); err != nil {
		t.Fatalf("the write in flight is not there: %v", err)
	}
	if _, err := s.GetSession(t.Context(), "second"); !errors.Is(err, core.ErrSessionNotFound) {
		t.Fatalf("the withdrawn write: want ErrSessionNotFound, got %v", err)
	}
}

// Close fails the writes still queued with STORE_CLOSED and lets the one in
// flight commit before it returns.
func TestGroupCommitCloseWithQueuedWrites(t *testing.T) {
	s, release := blockedStore(t)
	first := createAsync(t.Context(), s, "first")
	waitTaken(t, s)
	// Queued before Close or refused by it, the second write is
	// STORE_CLOSED either way.
	second := createAsync(t.Context(), s, "second")
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-second:
		if !errors.Is(err, core.ErrStoreClosed) {
			t.Fatalf("a write queued at Close: want ErrStoreClosed, got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a write queued at Close still waits")
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) before the write in flight committed", err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	if err := <-first; err != nil {
		t.Fatalf("the write in flight at Close: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
}
