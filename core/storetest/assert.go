package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/breadai/bread/core"
)

// noErr stops the case when a call that must succeed fails.
func noErr(t testing.TB, err error, format string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(format, args...), err)
	}
}

// isErr fails unless err matches target (errors.Is).
func isErr(t *testing.T, err, target error, format string, args ...any) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: want an error matching %v, got %v", fmt.Sprintf(format, args...), target, err)
	}
}

// equal fails when got != want.
func equal[T comparable](t *testing.T, what string, want, got T) {
	t.Helper()
	if got != want {
		t.Errorf("%s: want %v, got %v", what, want, got)
	}
}

// equalList fails when got and want differ in length or any element.
func equalList[T comparable](t *testing.T, what string, want, got []T) {
	t.Helper()
	if !slices.Equal(want, got) {
		t.Errorf("%s: want %v, got %v", what, want, got)
	}
}

// sameSet fails unless got holds the same elements as want, in any order.
func sameSet[T comparable](t *testing.T, what string, want, got []T) {
	t.Helper()
	count := make(map[T]int, len(want))
	for _, w := range want {
		count[w]++
	}
	for _, g := range got {
		count[g]--
	}
	for _, n := range count {
		if n != 0 {
			t.Errorf("%s: want %v in any order, got %v", what, want, got)
			return
		}
	}
}

// ids maps records to their ids, for readable comparisons.
func ids[T any](records []T, id func(T) string) []string {
	out := make([]string, len(records))
	for i, r := range records {
		out[i] = id(r)
	}
	return out
}

func sessionID(s core.Session) string             { return s.ID }
func checkpointID(c core.CheckpointRecord) string { return c.ID }
func loopID(l core.LoopRecord) string             { return l.ID }
func taskRunID(r core.TaskRunRecord) string       { return r.ID }
func nodeLabel(n core.KnowledgeNode) string       { return n.Label }
func documentTitle(d core.DocumentRecord) string  { return d.Title }

// assertNoMessages fails when the session id still has messages. A store may
// answer a missing session with no messages or with ErrSessionNotFound.
func assertNoMessages(t *testing.T, s core.BreadStore, id string) {
	t.Helper()
	msgs, err := s.GetMessages(t.Context(), id)
	switch {
	case errors.Is(err, core.ErrSessionNotFound):
	case err != nil:
		t.Errorf("GetMessages(%q): want no messages or ErrSessionNotFound, got %v", id, err)
	case len(msgs) != 0:
		t.Errorf("GetMessages(%q): want no messages, got %d", id, len(msgs))
	}
}

// assertGone fails unless the session is gone and left no messages behind,
// even once a session with the same id is created again.
func assertGone(t *testing.T, s core.BreadStore, id string) {
	t.Helper()
	_, err := s.GetSession(t.Context(), id)
	isErr(t, err, core.ErrSessionNotFound, "GetSession(%q) after deletion", id)
	assertNoMessages(t, s, id)
	_, err = s.CreateSession(t.Context(), core.NewSession{ID: id})
	noErr(t, err, "CreateSession(%q) again after deletion", id)
	msgs, err := s.GetMessages(t.Context(), id)
	noErr(t, err, "GetMessages(%q) of the re-created session", id)
	if len(msgs) != 0 {
		t.Errorf("a session re-created as %q inherited %d messages of the deleted one", id, len(msgs))
	}
}

// assertExists fails unless the session exists.
func assertExists(t *testing.T, s core.BreadStore, id string) {
	t.Helper()
	_, err := s.GetSession(t.Context(), id)
	noErr(t, err, "GetSession(%q) of a session that must survive", id)
}
