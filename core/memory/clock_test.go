package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
)

// TestOptionsNowIsTheStoresClock: sessions are stamped with Options.Now,
// and CleanupSessions ages them by it, so a test moves the clock instead of
// sleeping until sessions are old enough.
func TestOptionsNowIsTheStoresClock(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	s := memory.NewWithOptions(memory.Options{Now: func() time.Time { return at }})
	sess, err := s.CreateSession(ctx, core.NewSession{ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if sess.CreatedAt != at.UnixMilli() {
		t.Fatalf("CreatedAt %d, want the clock's %d", sess.CreatedAt, at.UnixMilli())
	}
	if n, err := s.CleanupSessions(ctx, core.CleanupOptions{OlderThan: time.Hour}); err != nil || n != 0 {
		t.Fatalf("cleanup of a new session: %d, %v", n, err)
	}
	at = at.Add(2 * time.Hour)
	if n, err := s.CleanupSessions(ctx, core.CleanupOptions{OlderThan: time.Hour}); err != nil || n != 1 {
		t.Fatalf("cleanup two hours later: %d, %v; want 1", n, err)
	}
}
