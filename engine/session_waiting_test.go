package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
)

// wellFormed reports the first place where a session's history breaks the
// rule providers enforce: every assistant message calling tools is
// followed at once by a tool message answering each of its calls.
func wellFormed(t *testing.T, store interface {
	GetMessages(context.Context, string) ([]core.SessionMessage, error)
}, sessionID string) (roles []string, problem string) {
	t.Helper()
	sms, err := store.GetMessages(context.Background(), sessionID)
	if err != nil {
		t.Fatal(err)
	}
	msgs := make([]core.Message, len(sms))
	for i, sm := range sms {
		if err := json.Unmarshal(sm.Content, &msgs[i]); err != nil {
			t.Fatal(err)
		}
		roles = append(roles, string(msgs[i].Role))
	}
	for i, m := range msgs {
		var calls []string
		for _, p := range m.Parts {
			if p.Type == core.PartToolCall {
				calls = append(calls, p.ToolCallID)
			}
		}
		if len(calls) == 0 {
			continue
		}
		if i+1 >= len(msgs) {
			continue // the last message: a run waiting for its answer
		}
		answered := map[string]bool{}
		if msgs[i+1].Role == core.RoleTool {
			for _, p := range msgs[i+1].Parts {
				if p.Type == core.PartToolResult {
					answered[p.ToolCallID] = true
				}
			}
		}
		for _, id := range calls {
			if !answered[id] {
				return roles, fmt.Sprintf("message %d: call %s is not answered by the next message", i, id)
			}
		}
	}
	return roles, ""
}

// TestARunWaitingForAHumanHoldsItsSession is issue 31's second path: a run
// suspended for a human holds its session under the new run's concurrency
// policy, so the session's history stays well formed whatever comes next.
func TestARunWaitingForAHumanHoldsItsSession(t *testing.T) {
	cases := []struct {
		policy core.ConcurrencyPolicy
		// roles is the session's history at the end.
		roles string
	}{
		{core.ConcurrencyReject, "user,assistant,tool,assistant"},
		{core.ConcurrencyEnqueue, "user,assistant,tool,assistant,user,assistant"},
		{core.ConcurrencyInterrupt, "user,assistant,tool,assistant,user,assistant"},
		{core.ConcurrencyRollback, "user,assistant"},
	}
	for _, tc := range cases {
		t.Run(string(tc.policy), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				agent := askAgent()
				agent.Concurrency = tc.policy
				turns := []modeltest.Turn{modeltest.ToolCall("human_approve_publish", map[string]string{"url": "https://bread.dev"})}
				switch tc.policy {
				case core.ConcurrencyReject, core.ConcurrencyEnqueue:
					turns = append(turns, modeltest.Text("Published."), modeltest.Text("second"))
				default:
					turns = append(turns, modeltest.Text("second"))
				}
				tb := newTestbed(t, modeltest.New(turns...), []*core.Agent{agent})
				ctx := context.Background()
				opts := core.RunOptions{Session: core.SessionOptions{ID: "s-" + string(tc.policy)}}
				cs, err := tb.run(t, "publisher", "publish", opts)
				if err != nil {
					t.Fatal(err)
				}
				hr := suspendOn(t, cs)

				second := make(chan runResult, 1)
				go func() {
					cs, err := collect(tb.in.Run(ctx, "publisher", "again", opts))
					second <- runResult{cs, err}
				}()
				synctest.Wait()
				switch tc.policy {
				case core.ConcurrencyReject:
					res := <-second
					wantCode(t, res.err, core.CodeSessionBusy)
					if !strings.Contains(res.err.Error(), hr.RunID) {
						t.Errorf("the refusal does not name the waiting run: %v", res.err)
					}
					if _, err := collect(tb.in.Resume(ctx, hr.CheckpointID, map[string]any{"ok": true})); err != nil {
						t.Fatalf("resuming the waiting run: %v", err)
					}
				case core.ConcurrencyEnqueue:
					select {
					case res := <-second:
						t.Fatalf("the second run went on while the first waited: %v %v", types(res.crumbs), res.err)
					default:
					}
					if _, err := collect(tb.in.Resume(ctx, hr.CheckpointID, map[string]any{"ok": true})); err != nil {
						t.Fatalf("resuming the waiting run: %v", err)
					}
					if res := <-second; res.err != nil {
						t.Fatalf("the queued run: %v", res.err)
					}
				default:
					if res := <-second; res.err != nil {
						t.Fatalf("the interrupting run: %v", res.err)
					}
					if r := getRun(t, tb.store, hr.RunID); r.Status != core.RunCancelled {
						t.Errorf("the interrupted waiting run: %+v", r)
					}
					_, err := collect(tb.in.Resume(ctx, hr.CheckpointID, map[string]any{"ok": true}))
					wantCode(t, err, core.CodeCheckpointNotFound)
				}
				roles, problem := wellFormed(t, tb.store, cs[0].Base().SessionID)
				if problem != "" {
					t.Fatalf("history %v: %s", roles, problem)
				}
				if got := strings.Join(roles, ","); got != tc.roles {
					t.Fatalf("history %s, want %s", got, tc.roles)
				}
			})
		})
	}
}

// TestAResumeWhoseLeaseLapsedStillHoldsItsSession is a violation the chaos
// harness found (issue 31): a resume's replica was paused (SIGSTOP) past
// its lease; until a sweeper put the run back to waiting for a retry, its
// record was running under a lapsed lease, which neither the claim nor the
// check for waiting runs counted, so a run queued on the session (enqueue)
// started between the approved call and its result: the session read
// user,assistant(call),user,assistant,tool. A resume whose lease lapsed
// still holds the session while its checkpoint is there.
func TestAResumeWhoseLeaseLapsedStillHoldsItsSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		agent := askAgent()
		agent.Concurrency = core.ConcurrencyEnqueue
		tb := newTestbed(t, modeltest.New(
			modeltest.ToolCall("human_approve_publish", map[string]string{"url": "https://bread.dev"}),
			modeltest.Text("Published."), modeltest.Text("second")), []*core.Agent{agent})
		ctx := context.Background()
		opts := core.RunOptions{Session: core.SessionOptions{ID: "s-lapsed"}}
		cs, err := tb.run(t, "publisher", "publish", opts)
		if err != nil {
			t.Fatal(err)
		}
		hr := suspendOn(t, cs)
		// The resume in flight on a paused replica: running from the
		// checkpoint under a lease that has lapsed, not yet swept.
		rec := getRun(t, tb.store, hr.RunID)
		suspended := rec
		rec.Status, rec.Owner, rec.LeaseUntil = core.RunRunning, "paused-replica", time.Now().UnixMilli()-1
		if err := tb.store.PutRun(ctx, rec); err != nil {
			t.Fatal(err)
		}

		second := make(chan runResult, 1)
		go func() {
			cs, err := collect(tb.in.Run(ctx, "publisher", "again", opts))
			second <- runResult{cs, err}
		}()
		synctest.Wait()
		select {
		case res := <-second:
			t.Fatalf("the second run went on while the first's resume was only late: %v %v; first %+v", types(res.crumbs), res.err, getRun(t, tb.store, hr.RunID))
		default:
		}
		// The sweeper puts it back to waiting for a retry; the retried
		// resume ends it, and the queued run goes on.
		if err := tb.store.PutRun(ctx, suspended); err != nil {
			t.Fatal(err)
		}
		if _, err := collect(tb.in.Resume(ctx, hr.CheckpointID, map[string]any{"ok": true})); err != nil {
			t.Fatalf("resuming the waiting run: %v", err)
		}
		if res := <-second; res.err != nil {
			t.Fatalf("the queued run: %v", res.err)
		}
		roles, problem := wellFormed(t, tb.store, cs[0].Base().SessionID)
		if problem != "" {
			t.Fatalf("history %v: %s", roles, problem)
		}
		if got := strings.Join(roles, ","); got != "user,assistant,tool,assistant,user,assistant" {
			t.Fatalf("history %s", got)
		}
	})
}
