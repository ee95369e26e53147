package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// lapsedRun records run id running on sessionID under a dead replica's
// lease, which ends at leaseUntil (Unix ms).
func lapsedRun(t *testing.T, store *memory.Store, id, sessionID string, leaseUntil int64) {
	t.Helper()
	now := time.Now().UnixMilli()
	rec := core.RunRecord{ID: id, AgentID: "publisher", SessionID: sessionID, Status: core.RunRunning,
		Owner: "dead-replica", LeaseUntil: leaseUntil, CreatedAt: now, UpdatedAt: now}
	if err := store.PutRun(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
}

// leaveOpenTurn writes what run runID left in sessionID when it died mid
// turn: its question, a call it never answered, and its start logged.
func leaveOpenTurn(t *testing.T, store *memory.Store, runID, sessionID string) {
	t.Helper()
	ctx := context.Background()
	for _, m := range []core.Message{
		{Role: core.RoleUser, Parts: []core.Part{core.TextPart("look it up")}},
		{Role: core.RoleAssistant, Parts: []core.Part{{Type: core.PartToolCall, ToolCallID: "c1", ToolName: "lookup", Input: json.RawMessage(`{}`)}}},
	} {
		raw, _ := json.Marshal(m)
		if err := store.AddMessage(ctx, sessionID, core.SessionMessage{Role: m.Role, Content: raw, Timestamp: time.Now().UnixMilli()}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UnixMilli()
	start := &core.AgentRunStart{CrumbBase: core.CrumbBase{AgentID: "publisher", RunID: runID, SessionID: sessionID, Timestamp: now}}
	if err := store.AppendCrumbs(ctx, []core.CrumbLogEntry{{RunID: runID, Seq: 1, SessionID: sessionID, AgentID: "publisher",
		Type: core.TypeAgentRunStart, Crumb: start, CreatedAt: now}}); err != nil {
		t.Fatal(err)
	}
}

// wantHistory fails t unless sessionID's history is well formed and its
// roles are want, comma-separated.
func wantHistory(t *testing.T, store *memory.Store, sessionID, want string) {
	t.Helper()
	roles, problem := wellFormed(t, store, sessionID)
	if problem != "" {
		t.Fatalf("history %v: %s", roles, problem)
	}
	if got := strings.Join(roles, ","); got != want {
		t.Fatalf("history %s, want %s", got, want)
	}
}

// TestALostRunNeverClosesALaterRunsTurn is the chaos harness's session
// chaos-enqueue-1 (10 minutes, seed 11): a run that died waiting for its
// session (recorded running, its lease lapsed, nothing written) was
// declared lost by a sweeper after a later run of the session had stored
// its call to a human tool; the sweeper closed "the lost run's turn" with
// an error result and the interruption marker between that call and its
// answer. The later run's claim now declares the lapsed run lost itself,
// and a run that wrote nothing closes nothing.
func TestALostRunNeverClosesALaterRunsTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := askAgent()
		agent.Concurrency = core.ConcurrencyEnqueue
		tb := newTestbed(t, modeltest.New(modeltest.Text("first"),
			modeltest.ToolCall("human_approve_publish", map[string]string{"url": "https://bread.dev"}),
			modeltest.Text("Published.")), []*core.Agent{agent})
		ctx := context.Background()
		opts := core.RunOptions{Session: core.SessionOptions{ID: "s-lost"}}
		if _, err := tb.run(t, "publisher", "hello", opts); err != nil {
			t.Fatal(err)
		}
		lapsedRun(t, tb.store, "died-waiting", "s-lost", time.Now().UnixMilli()-1)

		cs, err := tb.run(t, "publisher", "publish", opts)
		if err != nil {
			t.Fatal(err)
		}
		hr := suspendOn(t, cs)
		time.Sleep(2 * engine.DefaultRunLease) // every sweeper has looked
		if got := getRun(t, tb.store, "died-waiting"); got.Status != core.RunLost {
			t.Fatalf("the lapsed run is %s, want lost", got.Status)
		}
		if _, err := collect(tb.in.Resume(ctx, hr.CheckpointID, map[string]any{"ok": true})); err != nil {
			t.Fatalf("resume: %v", err)
		}
		wantHistory(t, tb.store, "s-lost", "user,assistant,user,assistant,tool,assistant")
		msgs, _ := tb.store.GetMessages(ctx, "s-lost")
		if c := string(msgs[4].Content); strings.Contains(c, "isError") || strings.Contains(c, "RUN_LOST") {
			t.Fatalf("the approved call was answered with %s", c)
		}
		if c := string(msgs[5].Content); !strings.Contains(c, "Published.") {
			t.Fatalf("the run's answer is %s", c)
		}
	})
}

// TestTheNextRunClosesALostRunsOpenTurn: a run that died with a tool call
// open (its replica killed) is closed by the session's next run, before
// that run writes its own turn, whether the next run found it lapsed (and
// declared it lost) or waited for it until a sweeper did. The sweeper
// leaves the session alone while another run is on it.
func TestTheNextRunClosesALostRunsOpenTurn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lease time.Duration // of the dead run, from when the next run arrives
	}{
		{"lapsed when the next run arrives", -time.Millisecond},
		{"lapsing while the next run waits for it", engine.DefaultRunLease / 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				agent := textAgent("publisher")
				agent.Concurrency = core.ConcurrencyEnqueue
				tb := newTestbed(t, modeltest.New(modeltest.Text("first"), modeltest.Text("second")), []*core.Agent{agent})
				ctx := context.Background()
				opts := core.RunOptions{Session: core.SessionOptions{ID: "s-open"}}
				if _, err := tb.run(t, "publisher", "hello", opts); err != nil {
					t.Fatal(err)
				}
				leaveOpenTurn(t, tb.store, "died-mid-call", "s-open")
				lapsedRun(t, tb.store, "died-mid-call", "s-open", time.Now().Add(tc.lease).UnixMilli())

				if _, err := tb.run(t, "publisher", "again", opts); err != nil {
					t.Fatalf("the next run: %v", err)
				}
				time.Sleep(2 * engine.DefaultRunLease)
				if got := getRun(t, tb.store, "died-mid-call"); got.Status != core.RunLost {
					t.Fatalf("the dead run is %s, want lost", got.Status)
				}
				wantHistory(t, tb.store, "s-open", "user,assistant,user,assistant,tool,assistant,user,assistant")
				msgs, _ := tb.store.GetMessages(ctx, "s-open")
				if !strings.Contains(string(msgs[5].Content), "[interrupted: RUN_LOST]") {
					t.Fatalf("the dead run's turn closed with %s", msgs[5].Content)
				}
			})
		})
	}
}

// TestARetriedLostRunLeavesALaterRunsTurn: a background run lost mid-turn
// and queued for its retry (onLost retry), then another run on its
// session, then the retry. The other run closes the lost attempt's open
// call before writing its turn; the retry, which removes what its lost
// attempt wrote when the session is still as it left it, leaves the
// session alone once another run has written since, and runs its turn
// after. Before, the retry removed every message since the lost attempt
// began, the other run's turn with it.
func TestARetriedLostRunLeavesALaterRunsTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := textAgent("publisher")
		agent.Concurrency = core.ConcurrencyEnqueue
		tb := newTestbed(t, modeltest.New(modeltest.Text("first"), modeltest.Text("second"), modeltest.Text("third")), []*core.Agent{agent}, withQueue(1))
		ctx := context.Background()
		opts := core.RunOptions{Session: core.SessionOptions{ID: "s-retry"}}
		if _, err := tb.run(t, "publisher", "hello", opts); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		// The lost attempt's open turn; its record queued for the retry.
		leaveOpenTurn(t, tb.store, "lost-bg", "s-retry")
		now := time.Now().UnixMilli()
		if err := tb.store.PutRun(ctx, core.RunRecord{ID: "lost-bg", AgentID: "publisher", SessionID: "s-retry", Status: core.RunQueued,
			Attempt: 1, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)

		if _, err := tb.run(t, "publisher", "again", opts); err != nil {
			t.Fatalf("the other run: %v", err)
		}
		time.Sleep(time.Second)
		if err := tb.in.WorkJobForTest(ctx, engine.RunJobForTest("lost-bg", "publisher", "look it up", "s-retry", "")); err != nil {
			t.Fatalf("the retry: %v", err)
		}
		if got := getRun(t, tb.store, "lost-bg"); got.Status != core.RunCompleted {
			t.Fatalf("the retried run is %s", got.Status)
		}
		wantHistory(t, tb.store, "s-retry", "user,assistant,user,assistant,tool,assistant,user,assistant,user,assistant")
	})
}
