package bunstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

func TestClausesUseTheDialect(t *testing.T) {
	s := newFake(fakeDialect{features: Features{ILike: "ILIKE"}})
	for got, want := range map[string]string{
		s.clauses.sessions:      "created_at ASC, bread_sessions_pos ASC",
		s.clauses.iterations:    "idx ASC, bread_loop_iterations_pos ASC",
		s.clauses.taskRuns:      "created_at DESC, bread_task_runs_pos DESC",
		s.clauses.labelMatch:    `label ILIKE ? ESCAPE '\'`,
		s.clauses.documentMatch: `(title ILIKE ? ESCAPE '\' OR content ILIKE ? ESCAPE '\')`,
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

// With SerializeWrites a second writer waits for the first, and gives up
// when its context ends; without, writers never wait.
func TestWriteSlot(t *testing.T) {
	s := newFake(fakeDialect{features: Features{SerializeWrites: true}})
	unlock, err := s.lockWrites(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.lockWrites(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second writer while the slot is taken: want the deadline, got %v", err)
	}
	unlock()
	unlock2, err := s.lockWrites(t.Context())
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	unlock2()

	free := newFake(fakeDialect{})
	for range 3 {
		if _, err := free.lockWrites(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	free.closed.Store(true)
	if _, err := free.lockWrites(t.Context()); !errors.Is(err, core.ErrStoreClosed) {
		t.Fatalf("closed store: %v", err)
	}
	if err := free.read(); !errors.Is(err, core.ErrStoreClosed) {
		t.Fatalf("read on a closed store: %v", err)
	}
}
