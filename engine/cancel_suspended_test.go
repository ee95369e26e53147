package engine_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// A run waiting for a human is cancelled from the store: its checkpoint
// goes, the pending call is answered as cancelled, the record says
// cancelled, the log ends with RUN_CANCELLED, and the session takes its
// next run with a well-formed history.
func TestCancelASuspendedRun(t *testing.T) {
	tb := newTestbed(t, modeltest.New(
		modeltest.ToolCall("human_approve_publish", map[string]string{"url": "x"}),
		modeltest.Text("Next turn."),
	), []*core.Agent{askAgent()})
	cs, err := tb.run(t, "publisher", "publish", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hr := suspendOn(t, cs)
	if found, err := tb.in.CancelSuspended(context.Background(), "no-such-run"); found || err != nil {
		t.Fatalf("an unknown run: %v, %v", found, err)
	}
	found, err := tb.in.CancelSuspended(context.Background(), hr.RunID)
	if !found || err != nil {
		t.Fatalf("CancelSuspended: %v, %v", found, err)
	}
	if _, err := collect(tb.in.Resume(context.Background(), hr.CheckpointID, okAnswer)); !isCode(err, core.CodeCheckpointNotFound) {
		t.Errorf("a resume after the cancel: %v", err)
	}
	rec, _ := tb.store.GetRun(context.Background(), hr.RunID)
	if rec.Status != core.RunCancelled || rec.ErrorCode != core.CodeRunCancelled {
		t.Errorf("record %+v", rec)
	}
	entries, _ := tb.store.GetCrumbs(context.Background(), hr.RunID, 0, 0)
	last := entries[len(entries)-1]
	if ae, ok := last.Crumb.(*core.AgentError); !ok || ae.Error.Code != core.CodeRunCancelled || last.Seq != hr.Seq+1 {
		t.Errorf("the log ends with %+v", last)
	}
	if found, _ := tb.in.CancelSuspended(context.Background(), hr.RunID); found {
		t.Error("a cancelled run was found waiting again")
	}
	// The next run on the session: every call of the history is answered.
	if _, err := tb.run(t, "publisher", "again", core.RunOptions{Session: core.SessionOptions{ID: hr.SessionID}}); err != nil {
		t.Fatal(err)
	}
	calls, answers := map[string]bool{}, map[string]bool{}
	for _, m := range tb.model.Requests()[1].Messages {
		for _, p := range m.Parts {
			switch p.Type {
			case core.PartToolCall:
				calls[p.ToolCallID] = true
			case core.PartToolResult:
				answers[p.ToolCallID] = true
				var out map[string]string
				_ = json.Unmarshal(p.Output, &out)
				if out["error"] != core.CodeRunCancelled {
					t.Errorf("the pending call's answer %s", p.Output)
				}
			}
		}
	}
	for id := range calls {
		if !answers[id] {
			t.Errorf("call %s has no answer in the next run's history", id)
		}
	}
}

// A set partly answered: the cancel answers the rest, and leaves nothing.
func TestCancelASuspendedSet(t *testing.T) {
	tb := newTestbed(t, modeltest.New(modeltest.ToolCalls(
		modeltest.Call{ID: "d", Name: "human_pick_date", Args: map[string]string{}},
		modeltest.Call{ID: "c", Name: "human_pick_city", Args: map[string]string{}},
	)), []*core.Agent{setAgent()})
	cs, _ := tb.run(t, "planner", "plan", core.RunOptions{})
	hrs := humans(cs)
	if _, err := collect(tb.in.Resume(context.Background(), hrs[0].CheckpointID, map[string]string{})); err != nil {
		t.Fatal(err)
	}
	if found, err := tb.in.CancelSuspended(context.Background(), hrs[0].RunID); !found || err != nil {
		t.Fatalf("CancelSuspended: %v, %v", found, err)
	}
	if left, _ := tb.store.ListCheckpoints(context.Background()); len(left) != 0 {
		t.Errorf("checkpoints left: %+v", left)
	}
	answered := map[string]int{}
	for _, m := range tb.messages(t, hrs[0].SessionID) {
		for _, p := range m.Parts {
			if p.Type == core.PartToolResult {
				answered[p.ToolCallID]++
			}
		}
	}
	if answered["d"] != 1 || answered["c"] != 1 {
		t.Errorf("each call answered once: %v", answered)
	}
}

// A resume in flight wins over a cancel, and the checkpoint stays.
func TestCancelLosesToAResumeInFlight(t *testing.T) {
	tb := newTestbed(t, modeltest.New(modeltest.ToolCall("human_approve_publish", map[string]string{})), []*core.Agent{askAgent()})
	cs, _ := tb.run(t, "publisher", "publish", core.RunOptions{})
	hr := suspendOn(t, cs)
	now := time.Now()
	if _, err := tb.store.ClaimCheckpoint(context.Background(), hr.CheckpointID, "another-replica", now.UnixMilli(), now.Add(time.Minute).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	found, err := tb.in.CancelSuspended(context.Background(), hr.RunID)
	if !found || !isCode(err, core.CodeCheckpointClaimed) {
		t.Fatalf("want CHECKPOINT_CLAIMED, got %v, %v", found, err)
	}
	if _, err := tb.store.GetCheckpoint(context.Background(), hr.CheckpointID); err != nil {
		t.Errorf("the checkpoint of a resume in flight is gone: %v", err)
	}
	if rec, _ := tb.store.GetRun(context.Background(), hr.RunID); rec.Status != core.RunSuspended {
		t.Errorf("record %+v", rec)
	}
}

// A run waiting inside a composition is not cancelled alone.
func TestCancelRefusesARunWaitingInAPipeline(t *testing.T) {
	tb := newTestbed(t, modeltest.New(modeltest.ToolCall("human_approve_publish", map[string]string{})), []*core.Agent{askAgent()},
		func(c *engine.Config) {
			c.Pipelines = map[string][]core.PipelineStep{"p": {{Type: core.StepAgent, AgentID: "publisher"}}}
		})
	cs, _ := collect(tb.in.RunPipeline(context.Background(), "p", "go"))
	hr := suspendOn(t, cs)
	found, err := tb.in.CancelSuspended(context.Background(), hr.RunID)
	if !found || !isCode(err, core.CodeNotImplemented) {
		t.Fatalf("want NOT_IMPLEMENTED, got %v, %v", found, err)
	}
	if _, err := tb.store.GetCheckpoint(context.Background(), hr.CheckpointID); err != nil {
		t.Errorf("the refused cancel removed the checkpoint: %v", err)
	}
}

// TestCancellingARunWhoseLostResumeAnsweredKeepsOneAnswer is a violation
// the chaos harness found under SIGSTOP (issue 31): a resume recorded the
// approved tool's result, then its replica was paused past its lease; the
// sweeper put the run back to waiting for a retry (suspended, RUN_LOST,
// its checkpoint kept); a run on the session under the interrupt policy
// then cancelled the waiting run, and CancelSuspended answered the call a
// second time ("a result for h1 that no call right before awaits"). The
// call keeps its one answer.
func TestCancellingARunWhoseLostResumeAnsweredKeepsOneAnswer(t *testing.T) {
	tb := newTestbed(t, modeltest.New(
		modeltest.ToolCall("human_approve_publish", map[string]string{"url": "x"}),
	), []*core.Agent{askAgent()})
	cs, err := tb.run(t, "publisher", "publish", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hr := suspendOn(t, cs)
	ctx := context.Background()
	// The lost resume's part: the approved tool's result, then the
	// sweeper's record.
	result := core.Message{Role: core.RoleTool, Parts: []core.Part{{Type: core.PartToolResult, ToolCallID: hr.ToolCallID, ToolName: hr.ToolName, Output: json.RawMessage(`"published"`)}}}
	raw, _ := json.Marshal(result)
	if err := tb.store.AddMessage(ctx, hr.SessionID, core.SessionMessage{Role: core.RoleTool, Content: raw}); err != nil {
		t.Fatal(err)
	}
	rec, _ := tb.store.GetRun(ctx, hr.RunID)
	rec.ErrorCode = core.CodeRunLost
	if err := tb.store.PutRun(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if found, err := tb.in.CancelSuspended(ctx, hr.RunID); !found || err != nil {
		t.Fatalf("CancelSuspended: %v, %v", found, err)
	}
	msgs, _ := tb.store.GetMessages(ctx, hr.SessionID)
	results := 0
	for _, sm := range msgs {
		var m core.Message
		if err := json.Unmarshal(sm.Content, &m); err != nil {
			t.Fatal(err)
		}
		for _, p := range m.Parts {
			if p.Type == core.PartToolResult && p.ToolCallID == hr.ToolCallID {
				results++
			}
		}
	}
	if results != 1 {
		t.Errorf("the call has %d results after the cancel, want the lost resume's one", results)
	}
	if rec, _ := tb.store.GetRun(ctx, hr.RunID); rec.Status != core.RunCancelled {
		t.Errorf("record %+v", rec)
	}
}
