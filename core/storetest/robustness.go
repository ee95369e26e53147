package storetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
)

func contextCases() []testCase {
	return []testCase{
		{name: "a cancelled context fails every call", run: testCancelledContext},
	}
}

func concurrencyCases() []testCase {
	return []testCase{
		{name: "mixed writes on distinct sessions", run: testConcurrentSessions},
		{name: "concurrent appends to one session", run: testConcurrentMessages},
		{name: "concurrent writes keep their own outcomes", run: testConcurrentOutcomes},
	}
}

func lifecycleCases() []testCase {
	return []testCase{
		{name: "Migrate again keeps the data", needs: needsMigrate, run: testMigrateAgain},
		{name: "Ping answers an open store", needs: needsPing, run: testPing},
		{name: "calls after Close fail with ErrStoreClosed", needs: needsClosedErrors, run: testClosed},
	}
}

// testCancelledContext only asks for an error: whether a store notices the
// cancellation before or during the call is its own business. A cancelled
// claim must not consume the checkpoint, nor a cancelled delete the session.
func testCancelledContext(t *testing.T, s core.BreadStore) {
	seed := seedEverything(t, s)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, c := range everyCall(s, seed) {
		if err := c.do(ctx); err == nil {
			t.Errorf("%s with a cancelled context returned no error", c.name)
		}
	}
	_, err := s.GetCheckpoint(t.Context(), "cp")
	noErr(t, err, "GetCheckpoint after a cancelled DeleteCheckpoint")
	assertExists(t, s, "s")
}

func testConcurrentSessions(t *testing.T, s core.BreadStore) {
	const workers, messages = 20, 10
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			if err := sessionWorkout(t.Context(), s, w, messages); err != nil {
				t.Errorf("worker %d: %v", w, err)
			}
		})
	}
	wg.Wait()
	list, err := s.ListSessions(t.Context(), core.SessionFilter{Tags: map[string]string{"kept": "yes"}})
	noErr(t, err, "ListSessions")
	equal(t, "sessions the workers kept", workers/2, len(list))
	all, err := s.ListSessions(t.Context(), core.SessionFilter{})
	noErr(t, err, "ListSessions")
	equal(t, "sessions left", workers/2, len(all))
}

// sessionWorkout is one worker's share of testConcurrentSessions: a session
// with messages and a suspended run, checked, then deleted by odd workers.
func sessionWorkout(ctx context.Context, s core.BreadStore, w, messages int) error {
	keep := "no"
	if w%2 == 0 {
		keep = "yes"
	}
	sess, err := s.CreateSession(ctx, core.NewSession{ID: fmt.Sprintf("worker-%d", w), Tags: map[string]string{"kept": keep}})
	if err != nil {
		return fmt.Errorf("CreateSession: %w", err)
	}
	for i := range messages {
		if err := s.AddMessage(ctx, sess.ID, textMessage(core.RoleUser, fmt.Sprint(i), baseTime)); err != nil {
			return fmt.Errorf("AddMessage %d: %w", i, err)
		}
	}
	cp := checkpoint("cp-"+sess.ID, sess.ID, baseTime+int64(w))
	if err := s.SuspendRun(ctx, sess.ID, turnMessages(baseTime)[:2], cp); err != nil {
		return fmt.Errorf("SuspendRun: %w", err)
	}
	msgs, err := s.GetMessages(ctx, sess.ID)
	if err != nil {
		return fmt.Errorf("GetMessages: %w", err)
	}
	if len(msgs) != messages+2 {
		return fmt.Errorf("want %d messages, got %d", messages+2, len(msgs))
	}
	for i := range messages {
		if string(compact(msgs[i].Content)) != fmt.Sprintf(`"%d"`, i) {
			return fmt.Errorf("message %d holds %s", i, msgs[i].Content)
		}
	}
	if _, err := s.ListSessions(ctx, core.SessionFilter{}); err != nil {
		return fmt.Errorf("ListSessions: %w", err)
	}
	if _, err := s.DeleteCheckpoint(ctx, cp.ID); err != nil {
		return fmt.Errorf("DeleteCheckpoint: %w", err)
	}
	if keep == "no" {
		if err := s.DeleteSession(ctx, sess.ID); err != nil {
			return fmt.Errorf("DeleteSession: %w", err)
		}
	}
	return nil
}

func testConcurrentMessages(t *testing.T, s core.BreadStore) {
	const writers, each = 10, 20
	createSession(t, s, core.NewSession{ID: "s"})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				m := message(core.RoleUser, fmt.Sprintf(`{"w":%d,"i":%d}`, w, i), baseTime)
				if err := s.AddMessage(t.Context(), "s", m); err != nil {
					t.Errorf("writer %d, message %d: %v", w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	msgs, err := s.GetMessages(t.Context(), "s")
	noErr(t, err, "GetMessages")
	equal(t, "messages", writers*each, len(msgs))
	// Writers interleave, but each writer's own messages keep their order.
	next := make([]int, writers)
	for _, m := range msgs {
		var wi struct{ W, I int }
		if err := jsonUnmarshal(m.Content, &wi); err != nil || wi.W < 0 || wi.W >= writers {
			t.Fatalf("unexpected message content %s", m.Content)
		}
		if wi.I != next[wi.W] {
			t.Fatalf("writer %d: message %d read back where %d was expected", wi.W, wi.I, next[wi.W])
		}
		next[wi.W]++
	}
}

func testMigrateAgain(t *testing.T, s core.BreadStore) {
	m := capability[core.Migrator](t, s)
	createSession(t, s, core.NewSession{ID: "s"})
	noErr(t, m.Migrate(t.Context()), "Migrate on a migrated store")
	assertExists(t, s, "s")
}

func testPing(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "s"})
	noErr(t, capability[core.Pinger](t, s).Ping(t.Context()), "Ping")
}

func testClosed(t *testing.T, s core.BreadStore) {
	c := capability[io.Closer](t, s)
	seed := seedEverything(t, s)
	noErr(t, c.Close(), "Close")
	for _, call := range everyCall(s, seed) {
		err := call.do(t.Context())
		if !errors.Is(err, core.ErrStoreClosed) {
			t.Errorf("%s after Close: want an error matching ErrStoreClosed, got %v", call.name, err)
		}
	}
	_ = c.Close() // a second Close must not panic; its error is the store's choice
}

// testConcurrentOutcomes runs, at once, writes that succeed beside writes
// that fail (a message for a missing session, a session whose id is taken):
// a store that shares one transaction between concurrent writes (group
// commit) must still give each write its own outcome, keep every write it
// acknowledged and none it refused.
func testConcurrentOutcomes(t *testing.T, s core.BreadStore) {
	const writers, each = 8, 10
	createSession(t, s, core.NewSession{ID: "s"})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				m := message(core.RoleUser, fmt.Sprintf(`{"w":%d,"i":%d}`, w, i), baseTime)
				switch w % 4 {
				case 0, 1:
					if err := s.AddMessage(t.Context(), "s", m); err != nil {
						t.Errorf("writer %d, message %d: %v", w, i, err)
					}
				case 2:
					err := s.AddMessage(t.Context(), fmt.Sprintf("missing-%d-%d", w, i), m)
					if !errors.Is(err, core.ErrSessionNotFound) {
						t.Errorf("writer %d, message %d for a missing session: want ErrSessionNotFound, got %v", w, i, err)
					}
				case 3:
					id := fmt.Sprintf("own-%d-%d", w, i)
					if _, err := s.CreateSession(t.Context(), core.NewSession{ID: id}); err != nil {
						t.Errorf("writer %d, session %s: %v", w, id, err)
					}
					if _, err := s.CreateSession(t.Context(), core.NewSession{ID: id}); err == nil {
						t.Errorf("writer %d, session %s created twice", w, id)
					}
				}
			}
		})
	}
	wg.Wait()
	msgs, err := s.GetMessages(t.Context(), "s")
	noErr(t, err, "GetMessages")
	equal(t, "messages kept", writers/2*each, len(msgs))
	all, err := s.ListSessions(t.Context(), core.SessionFilter{})
	noErr(t, err, "ListSessions")
	equal(t, "sessions kept", 1+writers/4*each, len(all))
}
