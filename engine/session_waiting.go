package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/breadai/bread/core"
)

// holdForWaiting keeps a session for its run that waits for a human: that
// run's history ends with a tool call whose result only the resume writes,
// so a new run on the session in between would put its messages between
// the call and its result, a history providers refuse. Neither the
// sessionGate nor claimSession sees a suspended run (nothing runs it), nor
// a resume in flight (resumes do not claim), so a new run that holds the
// session checks the store for both before it starts, and applies its
// agent's ConcurrencyPolicy to them:
//
//   - reject: SESSION_BUSY, naming the waiting run;
//   - enqueue: it waits until the waiting run has ended (resumed to its end,
//     or cancelled), for as long as its caller waits;
//   - interrupt: the waiting run is cancelled (CancelSuspended: its pending
//     call answered as cancelled, RUN_CANCELLED), then the new run starts;
//   - rollback: as interrupt, then the waiting run's messages are removed
//     from the session as well, as a rollback removes a running run's.
//
// A resume in flight cannot be interrupted from here (it may run on another
// replica): interrupt and rollback wait for it as enqueue does. A run that
// waits inside a composition cannot be cancelled alone: interrupt and
// rollback refuse with SESSION_BUSY.
//
// It needs a store that lists runs (core.StoreRunList); without one a
// waiting run does not hold its session. runID is the new run, whose own
// record is skipped.
func (in *Instance) holdForWaiting(ctx context.Context, sessionID, runID string, policy core.ConcurrencyPolicy) error {
	if !in.store.Has(core.StoreRuns|core.StoreRunList) || sessionID == "" {
		return nil
	}
	wait := max(in.records.lease/8, 50*time.Millisecond)
	for {
		w, err := in.waitingRun(ctx, sessionID, runID)
		if err != nil || w == nil {
			return err
		}
		suspended := w.Status == core.RunSuspended
		switch policy {
		case core.ConcurrencyInterrupt, core.ConcurrencyRollback:
			if !suspended {
				break // a resume in flight: wait for it
			}
			found, err := in.CancelSuspended(ctx, w.ID)
			switch {
			case err == nil && found:
				if policy == core.ConcurrencyRollback {
					if err := in.rollbackWaiting(ctx, *w); err != nil {
						return err
					}
				}
				continue
			case isCode(err, core.CodeNotImplemented):
				return waitingBusy(sessionID, *w, "it waits inside a composition, which cannot be interrupted from one of its runs")
			case err != nil && !isCode(err, core.CodeCheckpointClaimed):
				return err
			}
			// Resumed or cancelled a moment ago: look again after a wait.
		case core.ConcurrencyEnqueue:
		default:
			why := "it waits for a human; resume or cancel it first"
			if !suspended {
				why = "it is being resumed; retry when it ends"
			}
			return waitingBusy(sessionID, *w, why)
		}
		t := in.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		case <-t.C():
		}
	}
}

// waitingRun returns a run of sessionID other than runID that holds the
// session without running under a claim: one suspended on a checkpoint
// that is still there, or a resume in flight (running from a checkpoint,
// under a live lease, or under a lapsed one while the checkpoint is still
// there: its resumer was paused or died, and a sweeper puts it back to
// waiting for a retry; found by the chaos harness, an enqueued run started
// in that window, between the approved call and its result), or one the
// sweeper has just declared lost while its checkpoint is still there
// (LoseRun, then the record back to waiting for a retry: two writes, and a
// run claiming the session between them, declaring the lapsed run lost in
// a race with the sweeper, went on). nil when there is none.
func (in *Instance) waitingRun(ctx context.Context, sessionID, runID string) (*core.RunRecord, error) {
	runs, err := in.store.ListRuns(ctx, core.RunFilter{SessionID: sessionID, Statuses: []core.RunStatus{core.RunSuspended, core.RunRunning, core.RunLost}})
	if err != nil {
		return nil, err
	}
	now := in.nowMillis()
	recently := now - in.records.lease.Milliseconds()
	for _, r := range runs {
		switch {
		case r.ID == runID || r.CheckpointID == "":
		case r.Status == core.RunLost && r.UpdatedAt < recently:
			// Lost for longer than the sweeper's two writes take: its
			// checkpoint, if still there, is not read on every claim.
		case r.Status == core.RunRunning && r.LeaseUntil >= now:
			return &r, nil
		default:
			_, err := in.store.GetCheckpoint(ctx, r.CheckpointID)
			if err == nil {
				return &r, nil
			}
			if !errors.Is(err, core.ErrCheckpointNotFound) {
				return nil, err
			}
			// Answered or cancelled while its record was being written.
		}
	}
	return nil, nil
}

// rollbackWaiting removes the messages of a cancelled waiting run from its
// session: from its first user message written since it started (its
// record's CreatedAt) to the end, which includes what cancelling it added.
// A run before it ended before it started, and its last message is never a
// user's, so a shared millisecond does not take one of its messages.
func (in *Instance) rollbackWaiting(ctx context.Context, w core.RunRecord) error {
	msgs, err := in.store.GetMessages(ctx, w.SessionID)
	if err != nil {
		return err
	}
	from := slices.IndexFunc(msgs, func(m core.SessionMessage) bool {
		return m.Timestamp >= w.CreatedAt && m.Role == core.RoleUser
	})
	if from < 0 || !in.store.Has(core.StoreMessageDelete) {
		return nil
	}
	// The ids read here, not the session's last n at a second read: a
	// message written between two reads (found by the chaos harness: a
	// rolled-back run's call left without its result) would be removed in
	// place of one of the waiting run's.
	ids := make([]string, 0, len(msgs)-from)
	for _, m := range msgs[from:] {
		ids = append(ids, m.ID)
	}
	if _, err := in.store.DeleteMessages(ctx, w.SessionID, ids); err != nil {
		return fmt.Errorf("bread: rolling back the cancelled waiting run's messages: %w", err)
	}
	return nil
}

func waitingBusy(sessionID string, w core.RunRecord, why string) error {
	return &core.BreadError{
		Code:    core.CodeSessionBusy,
		Message: "run " + quoteTruncated(w.ID) + " holds session " + quoteTruncated(sessionID) + ": " + why,
		Context: map[string]any{"sessionId": sessionID, "runId": w.ID, "checkpointId": w.CheckpointID},
	}
}
