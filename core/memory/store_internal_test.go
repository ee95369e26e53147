package memory

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/breadai/bread/core"
)

func TestTakenIDsAreValidationErrors(t *testing.T) {
	ctx := t.Context()
	s := New()
	if _, err := s.CreateSession(ctx, core.NewSession{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddMessage(ctx, "s", core.SessionMessage{Role: core.RoleUser, Content: []byte(`"keep me"`)}); err != nil {
		t.Fatal(err)
	}
	_, err := s.CreateSession(ctx, core.NewSession{ID: "s"})
	if !errors.Is(err, core.ErrValidation) {
		t.Errorf("CreateSession of a taken id: want VALIDATION_ERROR, got %v", err)
	}
	if msgs, _ := s.GetMessages(ctx, "s"); len(msgs) != 1 {
		t.Errorf("a refused CreateSession changed the session's messages: %d left", len(msgs))
	}
	loop := core.LoopRecord{ID: "l", SessionID: "s", Status: core.LoopRunning}
	if err := s.CreateLoop(ctx, loop); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateLoop(ctx, loop); !errors.Is(err, core.ErrValidation) {
		t.Errorf("CreateLoop of a taken id: want VALIDATION_ERROR, got %v", err)
	}
	run := core.TaskRunRecord{ID: "tr", TaskID: "t", Status: core.TaskRunning}
	if err := s.CreateTaskRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTaskRun(ctx, run); !errors.Is(err, core.ErrValidation) {
		t.Errorf("CreateTaskRun of a taken id: want VALIDATION_ERROR, got %v", err)
	}
}

func TestEmptyIDsAreValidationErrors(t *testing.T) {
	ctx := t.Context()
	s := New()
	if _, err := s.CreateSession(ctx, core.NewSession{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	checks := map[string]error{
		"SaveCheckpoint": s.SaveCheckpoint(ctx, core.CheckpointRecord{SessionID: "s"}),
		"SuspendRun":     s.SuspendRun(ctx, "s", []core.SessionMessage{{Role: core.RoleUser}}, core.CheckpointRecord{SessionID: "s"}),
		"CreateLoop":     s.CreateLoop(ctx, core.LoopRecord{SessionID: "s"}),
		"CreateTaskRun":  s.CreateTaskRun(ctx, core.TaskRunRecord{TaskID: "t"}),
	}
	for name, err := range checks {
		if !errors.Is(err, core.ErrValidation) {
			t.Errorf("%s without an id: want VALIDATION_ERROR, got %v", name, err)
		}
	}
	if msgs, _ := s.GetMessages(ctx, "s"); len(msgs) != 0 {
		t.Errorf("a refused SuspendRun wrote %d messages", len(msgs))
	}
}

func TestLoopIterationGetsAnID(t *testing.T) {
	ctx := t.Context()
	s := New()
	if err := s.CreateLoop(ctx, core.LoopRecord{ID: "l"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddLoopIteration(ctx, core.LoopIteration{LoopID: "l", Index: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddLoopIteration(ctx, core.LoopIteration{LoopID: "missing", Index: 1}); !errors.Is(err, core.ErrLoopNotFound) {
		t.Errorf("AddLoopIteration to a missing loop: want ErrLoopNotFound, got %v", err)
	}
	d, err := s.GetLoop(ctx, "l")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Iterations) != 1 || d.Iterations[0].ID == "" {
		t.Errorf("iterations %+v: want one with a generated id", d.Iterations)
	}
}

func TestKnowledgeEdgesAndData(t *testing.T) {
	ctx := t.Context()
	s := New()
	a, err := s.AddKnowledgeNode(ctx, core.NewKnowledgeNode{AgentID: "x", Label: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.AddKnowledgeNode(ctx, core.NewKnowledgeNode{AgentID: "x", Label: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Data == nil {
		t.Error("a node added without data reads back with nil Data, want an empty map")
	}
	err = s.AddKnowledgeEdge(ctx, core.KnowledgeEdge{FromID: a.ID, ToID: "missing", Relation: "r"})
	var be *core.BreadError
	if !errors.As(err, &be) || be.Code != core.CodeNotFound {
		t.Errorf("an edge to a missing node: want NOT_FOUND, got %v", err)
	}
	for _, e := range []core.KnowledgeEdge{{FromID: a.ID, ToID: b.ID}, {FromID: b.ID, ToID: a.ID}, {FromID: b.ID, ToID: b.ID}} {
		if err := s.AddKnowledgeEdge(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.ForgetKnowledge(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if len(s.edges) != 1 || s.edges[0].FromID != b.ID || s.edges[0].ToID != b.ID {
		t.Errorf("after forgetting a, edges are %+v, want only b→b", s.edges)
	}
	_, err = s.AddKnowledgeNode(ctx, core.NewKnowledgeNode{AgentID: "x", Label: "bad", Data: map[string]any{"ch": make(chan int)}})
	if !errors.Is(err, core.ErrValidation) {
		t.Errorf("data that does not encode: want VALIDATION_ERROR, got %v", err)
	}
}

func TestCloseIsFinalAndIdempotent(t *testing.T) {
	s := New()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.CreateSession(t.Context(), core.NewSession{}); !errors.Is(err, core.ErrStoreClosed) {
		t.Errorf("CreateSession after Close: want ErrStoreClosed, got %v", err)
	}
}

// TestMessageReadersDuringWrites exercises the unlocked copy in GetMessages
// under the race detector.
func TestMessageReadersDuringWrites(t *testing.T) {
	ctx := t.Context()
	s := New()
	if _, err := s.CreateSession(ctx, core.NewSession{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		for range 2000 {
			if err := s.AddMessage(ctx, "s", core.SessionMessage{Role: core.RoleUser, Content: []byte(`{"n":1}`)}); err != nil {
				t.Errorf("AddMessage: %v", err)
				return
			}
		}
	})
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			msgs, err := s.GetMessages(ctx, "s")
			if err != nil {
				t.Errorf("GetMessages: %v", err)
				return
			}
			for _, m := range msgs {
				if string(m.Content) != `{"n":1}` {
					t.Errorf("read a torn message %q", m.Content)
					return
				}
			}
		}
	})
	wg.Wait()
}

// The store keeps at most RetainRuns finished runs, records and crumb
// logs, dropping the oldest to finish; running and suspended runs stay.
func TestRetainRunsDropsTheOldestFinishedRuns(t *testing.T) {
	ctx := t.Context()
	s := NewWithOptions(Options{RetainRuns: 2})
	if _, err := s.CreateSession(ctx, core.NewSession{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	put := func(id string, st core.RunStatus) {
		t.Helper()
		if err := s.PutRun(ctx, core.RunRecord{ID: id, SessionID: "s", Status: st}); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendCrumbs(ctx, []core.CrumbLogEntry{{RunID: id, Seq: int64(len(s.runs) + 1), SessionID: "s", Type: core.TypeAgentRunStart,
			Crumb: &core.AgentRunStart{CrumbBase: core.CrumbBase{RunID: id, SessionID: "s"}}}}); err != nil {
			t.Fatal(err)
		}
	}
	has := func(id string) bool {
		_, err := s.GetRun(ctx, id)
		entries, _ := s.GetCrumbs(ctx, id, 0, 0)
		if (err == nil) != (len(entries) > 0) {
			t.Fatalf("run %s: record %v but %d crumbs", id, err, len(entries))
		}
		return err == nil
	}
	put("suspended", core.RunSuspended)
	put("a", core.RunCompleted)
	put("b", core.RunFailed)
	put("revived", core.RunCancelled)
	put("revived", core.RunRunning) // a stopped resume retried: running again
	put("c", core.RunCompleted)
	if has("a") || !has("b") || !has("c") {
		t.Errorf("with room for 2 finished runs, a (oldest) must go and b, c stay: a %v b %v c %v", has("a"), has("b"), has("c"))
	}
	if !has("suspended") || !has("revived") {
		t.Error("a suspended run and a run running again are never dropped")
	}
	if won, err := s.LoseRun(ctx, "revived", 1<<62); err != nil || !won {
		t.Fatalf("LoseRun: %v, %v", won, err)
	}
	put("d", core.RunCompleted)
	// Finished in order: b, c, revived (lost), d; room for two.
	if has("b") || has("c") || !has("revived") || !has("d") {
		t.Errorf("the two last to finish stay: b %v c %v revived %v d %v", has("b"), has("c"), has("revived"), has("d"))
	}
	if n := len(s.runRecords); n != 3 { // suspended, revived, d
		t.Errorf("%d run records kept, want 3", n)
	}
	for id := range s.sessionRuns["s"].all {
		if id == "a" {
			t.Error("a dropped run stays in the session index")
		}
	}
}

// The store keeps about RetainSessions sessions, dropping the least
// recently updated with their messages, run records and crumbs once there
// are a sixteenth more; a session with a checkpoint or an unfinished run
// stays.
func TestRetainSessionsDropsTheLeastRecentlyUpdated(t *testing.T) {
	ctx := t.Context()
	clock := time.UnixMilli(1_000_000)
	tick := func() time.Time { clock = clock.Add(time.Second); return clock }
	s := NewWithOptions(Options{RetainSessions: 4, Now: func() time.Time { return clock }})
	create := func(id string) {
		t.Helper()
		tick()
		if _, err := s.CreateSession(ctx, core.NewSession{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	add := func(id string) {
		t.Helper()
		tick()
		if err := s.AddMessage(ctx, id, core.SessionMessage{Role: core.RoleUser, Content: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	has := func(id string) bool {
		_, err := s.GetSession(ctx, id)
		return err == nil
	}
	create("waiting") // a checkpoint: kept whatever its age
	if err := s.SaveCheckpoint(ctx, core.CheckpointRecord{ID: "cp", RunID: "r0", AgentID: "a", SessionID: "waiting", ToolName: "ask", ToolCallID: "c"}); err != nil {
		t.Fatal(err)
	}
	create("running") // an unfinished run: kept
	if err := s.PutRun(ctx, core.RunRecord{ID: "r1", SessionID: "running", Status: core.RunRunning}); err != nil {
		t.Fatal(err)
	}
	create("touched")
	create("idle")
	add("idle")
	if err := s.PutRun(ctx, core.RunRecord{ID: "r2", SessionID: "idle", Status: core.RunCompleted}); err != nil {
		t.Fatal(err)
	}
	add("touched") // the oldest idle session becomes the most recently updated
	create("new")  // 5 > 4 + 4/16: the least recently updated idle one goes
	for id, want := range map[string]bool{"waiting": true, "running": true, "touched": true, "idle": false, "new": true} {
		if has(id) != want {
			t.Errorf("session %s kept %v, want %v", id, has(id), want)
		}
	}
	if len(s.sessions) != 4 {
		t.Errorf("%d sessions kept, want 4", len(s.sessions))
	}
	if _, err := s.GetRun(ctx, "r2"); err == nil {
		t.Error("a dropped session's run record stays")
	}
	if msgs, _ := s.GetMessages(ctx, "idle"); len(msgs) != 0 {
		t.Error("a dropped session's messages stay")
	}
	if runs, _ := s.ListRuns(ctx, core.RunFilter{SessionID: "running"}); len(runs) != 1 {
		t.Errorf("the kept session lists %d runs, want 1", len(runs))
	}
	if _, ok := s.sessionRecords["idle"]; ok {
		t.Error("a dropped session stays in the run records' index")
	}

	keepAll := NewWithOptions(Options{RetainSessions: -1})
	for i := range 50 {
		if _, err := keepAll.CreateSession(ctx, core.NewSession{ID: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if len(keepAll.sessions) != 50 {
		t.Errorf("RetainSessions -1 kept %d of 50 sessions", len(keepAll.sessions))
	}
}

// Every kind of update makes a session the most recently updated for the
// retention (a message, a state, deleted messages, a run write), and a
// run write that creates a session counts as its creation; with a clock
// that does not move, the order of the updates decides.
func TestRetainSessionsFollowsEveryUpdate(t *testing.T) {
	ctx := t.Context()
	s := NewWithOptions(Options{RetainSessions: 4, Now: func() time.Time { return time.UnixMilli(1_000_000) }})
	for _, id := range []string{"msg", "state", "deleted", "written"} {
		if _, err := s.CreateSession(ctx, core.NewSession{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddMessage(ctx, "deleted", core.SessionMessage{Role: core.RoleUser, Content: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.GetMessages(ctx, "deleted")
	if err != nil || len(msgs) != 1 {
		t.Fatalf("GetMessages: %v, %v", msgs, err)
	}
	// Oldest first now: msg, state, written, deleted. Update them in
	// another order: written, msg, state, deleted.
	if _, err := s.WriteRun(ctx, core.RunWrite{SessionID: "written", Messages: []core.SessionMessage{{Role: core.RoleUser, Content: []byte(`{}`)}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddMessage(ctx, "msg", core.SessionMessage{Role: core.RoleUser, Content: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSessionState(ctx, "state", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteMessages(ctx, "deleted", []string{msgs[0].ID}); err != nil || n != 1 {
		t.Fatalf("DeleteMessages: %d, %v", n, err)
	}
	if _, err := s.WriteRun(ctx, core.RunWrite{SessionID: "new", Session: &core.NewSession{ID: "new"}}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"written": false, "msg": true, "state": true, "deleted": true, "new": true} {
		if _, err := s.GetSession(ctx, id); (err == nil) != want {
			t.Errorf("session %s kept %v, want %v", id, err == nil, want)
		}
	}
	var order []string
	for sess := s.order.oldest; sess != nil; sess = sess.newer {
		order = append(order, sess.info.ID)
	}
	if want := []string{"msg", "state", "deleted", "new"}; !slices.Equal(order, want) {
		t.Errorf("order of updates %v, want %v", order, want)
	}
}

// TestARunsNewSessionHoldsItsFirstMessages holds that a run's start write
// allocates the session it creates and the array of its first two messages
// (its input, then its answer) together: one object the collector marks on
// every cycle for each of the sessions the store keeps, not two.
func TestARunsNewSessionHoldsItsFirstMessages(t *testing.T) {
	ctx := t.Context()
	s := New()
	start := core.RunWrite{
		SessionID: "s", Session: &core.NewSession{ID: "s"},
		Messages: []core.SessionMessage{{Role: core.RoleUser, Content: []byte(`"hi"`)}},
	}
	if ok, err := s.WriteRun(ctx, start); !ok || err != nil {
		t.Fatalf("the start write: %v, %v", ok, err)
	}
	end := core.RunWrite{SessionID: "s", Messages: []core.SessionMessage{{Role: core.RoleAssistant, Content: []byte(`"hello"`)}}}
	if ok, err := s.WriteRun(ctx, end); !ok || err != nil {
		t.Fatalf("the end write: %v, %v", ok, err)
	}
	sess := s.sessions["s"]
	from := uintptr(unsafe.Pointer(sess))
	to := from + unsafe.Sizeof(sessionWithRoom{})
	for i := range sess.messages {
		if p := uintptr(unsafe.Pointer(&sess.messages[i])); p < from || p >= to {
			t.Errorf("message %d is in an allocation of its own (%#x, the session at %#x)", i, p, from)
		}
	}
	got, err := s.GetMessages(ctx, "s")
	if err != nil || len(got) != 2 || string(got[0].Content) != `"hi"` || string(got[1].Content) != `"hello"` {
		t.Fatalf("messages %+v, %v", got, err)
	}
}
