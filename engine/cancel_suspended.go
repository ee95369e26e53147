package engine

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/breadai/bread/core"
)

// CancelSuspended ends a run that waits for a human, from any instance:
// nobody runs it, so Cancel cannot reach it. Its checkpoints (every member
// of a set) are claimed first, so a resume in flight wins
// (CHECKPOINT_CLAIMED) and a resume after the cancel finds nothing
// (CHECKPOINT_NOT_FOUND). The pending calls are answered as cancelled in
// the session, which stays well formed for the next run; the record says
// cancelled; an agent:error RUN_CANCELLED ends every tail and replay of
// the run. found is false when the run is not waiting for a human (it is
// unknown, running, or over), or the store keeps no run records.
//
// A run waiting inside a composition (a pipeline step, a delegation, a
// loop iteration) is NOT_IMPLEMENTED: cancelling it alone would leave its
// composition waiting for ever.
func (in *Instance) CancelSuspended(ctx context.Context, runID string) (found bool, err error) {
	if !in.records.keeps {
		return false, nil
	}
	rec, err := in.store.GetRun(ctx, runID)
	if err != nil || rec.Status != core.RunSuspended || rec.CheckpointID == "" {
		return false, nil
	}
	cp, err := in.store.GetCheckpoint(ctx, rec.CheckpointID)
	if err != nil {
		return false, nil // answered a moment ago
	}
	if cp.Parent != nil || len(cp.Pending) > 0 {
		return true, &core.BreadError{
			Code:    core.CodeNotImplemented,
			Message: "run " + quoteTruncated(runID) + " waits inside a composition (a pipeline step, a delegation or a loop iteration); cancelling it alone would leave the composition waiting",
			Context: map[string]any{"runId": runID, "checkpointId": cp.ID},
		}
	}
	ids := []string{cp.ID}
	if cp.Set != nil {
		ids = cp.Set.CheckpointIDs
	}
	now := in.clock.Now()
	var claimed []core.CheckpointRecord
	for _, id := range ids {
		c, err := in.store.ClaimCheckpoint(ctx, id, in.records.owner, now.UnixMilli(), now.Add(in.records.lease).UnixMilli())
		switch {
		case err == nil:
			claimed = append(claimed, c)
		case errors.Is(err, core.ErrCheckpointNotFound):
			// A member of the set answered already.
		default:
			for _, c := range claimed { // give back what was taken
				c.ClaimedBy, c.ClaimedUntil = "", 0
				_ = in.store.SaveCheckpoint(context.WithoutCancel(ctx), c)
			}
			if errors.Is(err, core.ErrCheckpointClaimed) {
				return true, &core.BreadError{Code: core.CodeCheckpointClaimed, Message: "run " + quoteTruncated(runID) + " is being resumed; cancel it once it runs", Context: map[string]any{"runId": runID}}
			}
			return true, err
		}
	}
	if len(claimed) == 0 {
		return false, nil
	}
	ctx = context.WithoutCancel(ctx)
	be := &core.BreadError{Code: core.CodeRunCancelled, Message: "the run was cancelled while it waited for a human"}
	// The calls still waiting get their answer, then the interruption is
	// recorded, so the next run's history is well formed.
	// A call a lost resume answered already (it recorded the approved
	// tool's result, then its process was paused or died, and its record
	// went back to waiting for a retry) keeps that one answer: a second
	// result would follow the first (found by the chaos harness under
	// SIGSTOP, a session's interrupt policy cancelling such a run).
	results := make([]core.Part, 0, len(claimed))
	for _, c := range claimed {
		if in.answered(ctx, rec.SessionID, c.ToolCallID) {
			continue
		}
		out, _ := json.Marshal(map[string]string{"error": core.CodeRunCancelled, "message": "cancelled before a human answered"})
		results = append(results, core.Part{Type: core.PartToolResult, ToolCallID: c.ToolCallID, ToolName: c.ToolName, Output: out, IsError: true})
	}
	if len(results) > 0 {
		if err := in.persist(ctx, rec.SessionID, core.Message{Role: core.RoleTool, Parts: results}); err != nil {
			return true, err
		}
	}
	in.closeInterrupted(ctx, rec.SessionID, 0, core.CodeRunCancelled)
	in.records.ended(ctx, core.RunRecord{ID: rec.ID, AgentID: rec.AgentID, SessionID: rec.SessionID}, outcome{}, be)
	for _, c := range claimed {
		if _, err := in.store.DeleteCheckpoint(ctx, c.ID); err != nil && !errors.Is(err, core.ErrCheckpointNotFound) {
			in.log.Warn("bread: removing a cancelled run's checkpoint failed", append(runAttrs(rec.ID, rec.AgentID, rec.SessionID), "checkpoint_id", c.ID, "error", err)...)
		}
	}
	in.endDurably(ctx, rec, core.NowMillis(), be)
	return true, nil
}
