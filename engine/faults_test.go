package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// errDied is what every write of a dead process "returns": nothing of it
// reaches the store.
var errDied = errors.New("the process was killed")

// dyingStore is the store as a process sees it that is killed just before
// its nth durable write (from arming): that write and every later one never
// happen. Crumb-log appends and lease renewals are not counted (they are
// asynchronous, so their place in the order is not fixed) but stop too.
type dyingStore struct {
	*memory.Store
	mu    sync.Mutex
	armed bool
	left  int
	dead  bool
	steps []string // the writes that happened since arming
}

func (s *dyingStore) arm(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed, s.left, s.steps = true, n, nil
}

func (s *dyingStore) died() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dead
}

// write decides whether the write named step happens.
func (s *dyingStore) write(step string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return errDied
	}
	if !s.armed {
		return nil
	}
	if s.left == 0 {
		s.dead = true
		return errDied
	}
	s.left--
	s.steps = append(s.steps, step)
	return nil
}

// background stops with the process, without marking a step.
func (s *dyingStore) background() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return errDied
	}
	return nil
}

func (s *dyingStore) Close() error { return nil }

func (s *dyingStore) ClaimCheckpoint(ctx context.Context, id, claimant string, now, until int64) (core.CheckpointRecord, error) {
	if err := s.write("claim"); err != nil {
		return core.CheckpointRecord{}, err
	}
	return s.Store.ClaimCheckpoint(ctx, id, claimant, now, until)
}

func (s *dyingStore) SaveCheckpoint(ctx context.Context, cp core.CheckpointRecord) error {
	if err := s.write("save checkpoint"); err != nil {
		return err
	}
	return s.Store.SaveCheckpoint(ctx, cp)
}

func (s *dyingStore) DeleteCheckpoint(ctx context.Context, id string) (core.CheckpointRecord, error) {
	if err := s.write("delete checkpoint"); err != nil {
		return core.CheckpointRecord{}, err
	}
	return s.Store.DeleteCheckpoint(ctx, id)
}

func (s *dyingStore) SettleJoin(ctx context.Context, joinID string, slots, slot int, output json.RawMessage) ([]json.RawMessage, bool, error) {
	if err := s.write("settle join"); err != nil {
		return nil, false, err
	}
	return s.Store.SettleJoin(ctx, joinID, slots, slot, output)
}

func (s *dyingStore) SuspendRun(ctx context.Context, sessionID string, msgs []core.SessionMessage, cps ...core.CheckpointRecord) error {
	if err := s.write(fmt.Sprintf("append %d messages, %d checkpoints", len(msgs), len(cps))); err != nil {
		return err
	}
	return s.Store.SuspendRun(ctx, sessionID, msgs, cps...)
}

func (s *dyingStore) AddMessage(ctx context.Context, sessionID string, m core.SessionMessage) error {
	if err := s.write("add message"); err != nil {
		return err
	}
	return s.Store.AddMessage(ctx, sessionID, m)
}

func (s *dyingStore) PutRun(ctx context.Context, r core.RunRecord) error {
	if err := s.write("run record " + string(r.Status)); err != nil {
		return err
	}
	return s.Store.PutRun(ctx, r)
}

func (s *dyingStore) EndRun(ctx context.Context, r core.RunRecord, owner string) (bool, error) {
	if err := s.write("run record " + string(r.Status)); err != nil {
		return false, err
	}
	return s.Store.EndRun(ctx, r, owner)
}

// WriteRun is one durable write of several records (core.RunWriter).
func (s *dyingStore) WriteRun(ctx context.Context, w core.RunWrite) (bool, error) {
	step := fmt.Sprintf("write run: session %t, %d messages", w.Session != nil, len(w.Messages))
	if w.Run != nil {
		step += ", run record " + string(w.Run.Status)
	}
	if err := s.write(step); err != nil {
		return false, err
	}
	return s.Store.WriteRun(ctx, w)
}

func (s *dyingStore) AppendCrumbs(ctx context.Context, entries []core.CrumbLogEntry) error {
	if err := s.background(); err != nil {
		return err
	}
	return s.Store.AppendCrumbs(ctx, entries)
}

// AppendsInline reports false: the wrapper adds latency or faults to the
// memory store's writes, so they go through the engine's writer goroutine.
func (s *dyingStore) AppendsInline() bool { return false }

func (s *dyingStore) RenewCheckpointClaims(ctx context.Context, claimant string, until int64) (int, error) {
	if err := s.background(); err != nil {
		return 0, err
	}
	return s.Store.RenewCheckpointClaims(ctx, claimant, until)
}

func (s *dyingStore) RenewRunLeases(ctx context.Context, owner string, until int64) (int, error) {
	if err := s.background(); err != nil {
		return 0, err
	}
	return s.Store.RenewRunLeases(ctx, owner, until)
}

// TestResumeKilledAtEveryStep kills the resuming process before each
// durable write of a resume in turn (the claim, the run record, the answer,
// the join of a set, the continuation's messages, the final record, the
// checkpoint's removal), then retries the resume on a fresh instance once
// the claim has lapsed. Whatever the step: the run completes exactly once,
// the session holds each answer and the final reply exactly once, the
// approved tool ran with one idempotency key, and no checkpoint is left.
func TestResumeKilledAtEveryStep(t *testing.T) {
	for _, sc := range []struct {
		name string
		turn modeltest.Turn
		// answers lists the turn's calls, each of which must be answered
		// exactly once, in the order they are answered; the resume of the
		// one at index kill is killed and retried.
		answers []string
		kill    int
	}{
		{"an approval", modeltest.ToolCall("tool_weather", cityArgs{City: "Rome"}), []string{"call-tool_weather"}, 0},
		{"the approval that completes a set", setOfTwo("d", "w"), []string{"d", "w"}, 1},
		{"the answer that completes a set, after an approval", setOfTwo("w", "d"), []string{"w", "d"}, 1},
		{"an approval that leaves a set waiting", setOfTwo("w", "d"), []string{"w", "d"}, 0},
		{"an answer that leaves a set waiting", setOfTwo("d", "w"), []string{"d", "w"}, 0},
	} {
		t.Run(sc.name, func(t *testing.T) {
			// Fake time: the retry waits for a dead claim to lapse.
			synctest.Test(t, func(t *testing.T) { killAtEveryStep(t, sc.turn, sc.answers, sc.kill) })
		})
	}
}

// setOfTwo is a turn calling the date human tool (id "d") and the gated
// weather tool (id "w") in the order of ids.
func setOfTwo(ids ...string) modeltest.Turn {
	calls := map[string]modeltest.Call{
		"d": {ID: "d", Name: "human_pick_date", Args: map[string]string{}},
		"w": {ID: "w", Name: "tool_weather", Args: cityArgs{City: "Rome"}},
	}
	var turn []modeltest.Call
	for _, id := range ids {
		turn = append(turn, calls[id])
	}
	return modeltest.ToolCalls(turn...)
}

func killAtEveryStep(t *testing.T, turn modeltest.Turn, answers []string, kill int) {
	const lease = 150 * time.Millisecond
	for n := 0; n < 30; n++ {
		inner := memory.New()
		store := &dyingStore{Store: inner}
		var mu sync.Mutex
		var keys []string
		agent := setAgent()
		tool := weatherTool()
		run := tool.Execute
		tool.Execute = func(ctx context.Context, raw json.RawMessage, tc core.ToolContext) (any, error) {
			mu.Lock()
			keys = append(keys, tc.IdempotencyKey)
			mu.Unlock()
			return run(ctx, raw, tc)
		}
		agent.Tools = []core.Tool{tool}
		start := func(s core.BreadStore, turns ...modeltest.Turn) (*engine.Instance, *modeltest.Model) {
			model := modeltest.New(turns...)
			in, err := engine.New(engine.Config{Store: s, Agents: []*core.Agent{agent}, Providers: model.Registry("mock"), RunLease: lease})
			if err != nil {
				t.Fatal(err)
			}
			if err := in.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = in.Stop(context.Background()) })
			return in, model
		}
		respond := func(hr *core.HumanRequired) any {
			if hr.Kind == core.HumanApproval {
				return map[string]bool{"approved": true}
			}
			return map[string]string{"date": "Friday"}
		}

		a, _ := start(store, turn, modeltest.Text("Sunny in Rome."))
		cs, err := collect(a.Run(context.Background(), "planner", "weather?", core.RunOptions{}))
		if err != nil {
			t.Fatal(err)
		}
		hrs := humans(cs)
		if len(hrs) != len(answers) {
			t.Fatalf("%d human:required for %d calls", len(hrs), len(answers))
		}
		// A human:required's call: its checkpoint's.
		ordered := make([]*core.HumanRequired, len(answers))
		for _, hr := range hrs {
			cp, err := inner.GetCheckpoint(context.Background(), hr.CheckpointID)
			if err != nil {
				t.Fatal(err)
			}
			ordered[slices.Index(answers, cp.ToolCallID)] = hr
		}
		for _, hr := range ordered[:kill] {
			if _, err := collect(a.Resume(context.Background(), hr.CheckpointID, respond(hr))); err != nil {
				t.Fatal(err)
			}
		}
		killed := ordered[kill]
		store.arm(n)
		_, _ = collect(a.Resume(context.Background(), killed.CheckpointID, respond(killed)))
		if !store.died() {
			t.Logf("the resume makes %d durable writes: %v", n, store.steps)
			if n < 5 {
				t.Fatalf("the resume made only %d writes: the fault points were not reached", n)
			}
			return
		}
		died := fmt.Sprintf("killed after %v", store.steps)

		b, bModel := start(keepOpen{inner}, modeltest.Text("Sunny in Rome."))
		var retryErr error
		deadline := time.Now().Add(5 * time.Second)
		for {
			_, retryErr = collect(b.Resume(context.Background(), killed.CheckpointID, respond(killed)))
			if !isCode(retryErr, core.CodeCheckpointClaimed) || time.Now().After(deadline) {
				break
			}
			time.Sleep(lease / 3) // fake time
		}
		if retryErr != nil && !isCode(retryErr, core.CodeCheckpointNotFound) {
			t.Fatalf("%s: the retry failed: %v", died, retryErr)
		}
		ended := slices.ContainsFunc(store.steps, func(step string) bool { return strings.HasSuffix(step, "run record completed") })
		if ended && !isCode(retryErr, core.CodeCheckpointNotFound) {
			t.Errorf("%s: the run had ended, yet the retry ran it again (%v)", died, retryErr)
		}
		for _, hr := range ordered[kill+1:] {
			if _, err := collect(b.Resume(context.Background(), hr.CheckpointID, respond(hr))); err != nil {
				t.Fatalf("%s: answering %s after the retry: %v", died, hr.ToolName, err)
			}
		}

		// Exactly one continuation, whoever carried it.
		msgs, err := inner.GetMessages(context.Background(), killed.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		results := map[string]int{}
		replies := 0
		for _, sm := range msgs {
			var m core.Message
			_ = json.Unmarshal(sm.Content, &m)
			for _, p := range m.Parts {
				switch {
				case p.Type == core.PartToolResult:
					results[p.ToolCallID]++
				case p.Type == core.PartText && m.Role == core.RoleAssistant && p.Text == "Sunny in Rome.":
					replies++
				}
			}
		}
		for _, id := range answers {
			if results[id] != 1 {
				t.Errorf("%s: the session answers call %s %d times, want once", died, id, results[id])
			}
		}
		if replies != 1 {
			t.Errorf("%s: the session holds %d final replies, want 1", died, replies)
		}
		if bModel.Calls() > 1 {
			t.Errorf("%s: the retry called the model %d times", died, bModel.Calls())
		}
		rec, err := inner.GetRun(context.Background(), killed.RunID)
		if err != nil || rec.Status != core.RunCompleted {
			t.Errorf("%s: the run's record: %+v, %v", died, rec, err)
		}
		if left, _ := inner.ListCheckpoints(context.Background()); len(left) != 0 {
			t.Errorf("%s: checkpoints left: %d", died, len(left))
		}
		mu.Lock()
		for _, k := range keys {
			if k != keys[0] {
				t.Errorf("%s: the tool ran with keys %v", died, keys)
				break
			}
		}
		mu.Unlock()
		_ = a.Stop(context.Background())
		_ = b.Stop(context.Background())
	}
	t.Fatal("the resume never finished without dying in 30 writes")
}
