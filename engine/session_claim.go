package engine

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/breadai/bread/core"
)

// claimSession holds a session across the replicas that share the store,
// where the sessionGate holds it only on this one. The run writes its
// record as running under this replica's lease (its claim), then lists the
// session's running runs with a live lease: the earliest to go running (by
// UpdatedAt, which a running run's renewals keep, then id) runs, the others
// yield; the winner does not write its record again when it starts, so its
// place holds. Every claimant writes before it reads, so of two concurrent
// claims at least one sees the other, and both order them alike: never two
// run at once. A run of the session whose lease lapsed is declared lost by
// the claimant itself (records.sweepLapsed), which fences off its paused
// owner's writes; a claimant that met other runs closes the turn one of
// them may have left open before it writes its own. A run that yields is
// refused with SESSION_BUSY (reject) or waits for the runs before it to end
// (enqueue; interrupt and rollback wait too: a run on another replica
// cannot be cancelled from here). A refused run's record says failed
// SESSION_BUSY.
//
// Runs resumed from a checkpoint hold the session they run on (their
// record goes running when they resume) but do not claim it, as the
// sessionGate does not gate them either: the run that won the claim then
// checks for them, and for runs waiting for a human (holdForWaiting).
func (in *Instance) claimSession(ctx context.Context, rec core.RunRecord, policy core.ConcurrencyPolicy) error {
	if !in.store.Has(core.StoreRuns|core.StoreRunList) || rec.SessionID == "" {
		return nil
	}
	since := in.nowMillis() - in.records.lease.Milliseconds()
	in.records.running(ctx, rec)
	wait := max(in.records.lease/8, 50*time.Millisecond)
	sawOthers := false
	for {
		runs, err := in.store.ListRuns(ctx, core.RunFilter{SessionID: rec.SessionID, Statuses: []core.RunStatus{core.RunRunning, core.RunLost, core.RunQueued}})
		if err != nil {
			in.records.ended(ctx, rec, outcome{}, err)
			return err
		}
		now := in.nowMillis()
		// Another run, running, lost about when this one came (a sweeper
		// that declared it lost found this one's record and left its
		// session to this run; records.sessionTailMayBeIts), or a lost
		// attempt queued for its retry (whose retry leaves the session's
		// turns in place once this one has written; sessionMovedOn).
		sawOthers = sawOthers || slices.ContainsFunc(runs, func(r core.RunRecord) bool {
			switch {
			case r.ID == rec.ID:
				return false
			case r.Status == core.RunQueued:
				return r.Attempt > 0
			}
			return r.Status == core.RunRunning || r.UpdatedAt >= since
		})
		in.records.sweepLapsed(ctx, runs, rec.ID, now)
		first := firstLive(runs, now)
		if first == "" || first == rec.ID {
			// First of the running runs: a run waiting for a human, or a
			// resume in flight, may still hold the session.
			if err := in.holdForWaiting(ctx, rec.SessionID, rec.ID, policy); err != nil {
				in.records.ended(ctx, rec, outcome{}, err)
				return err
			}
			if sawOthers {
				// A run this one waited for or declared lost may have
				// died with its turn open; the sweeper leaves that to the
				// session's next run (records.sessionTailMayBeIts), which
				// closes it before writing its own. No run waits for a
				// human here any more, so an open call is a dead run's.
				in.closeInterrupted(ctx, rec.SessionID, 0, core.CodeRunLost)
			}
			return nil
		}
		if policy == core.ConcurrencyReject || policy == "" {
			busy := &core.BreadError{Code: core.CodeSessionBusy, Message: "a run is already running on session " + quoteTruncated(rec.SessionID) + " (on another replica); retry when it ends",
				Context: map[string]any{"sessionId": rec.SessionID}}
			in.records.ended(ctx, rec, outcome{}, busy)
			return busy
		}
		t := in.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			err := context.Cause(ctx)
			in.records.ended(ctx, rec, outcome{}, err)
			return err
		case <-t.C():
		}
	}
}

// firstLive is the id of the earliest running run with a live lease, ""
// for none.
func firstLive(runs []core.RunRecord, now int64) string {
	live := slices.DeleteFunc(runs, func(r core.RunRecord) bool { return r.Status != core.RunRunning || r.LeaseUntil < now })
	if len(live) == 0 {
		return ""
	}
	return slices.MinFunc(live, func(a, b core.RunRecord) int {
		return cmp.Or(cmp.Compare(a.UpdatedAt, b.UpdatedAt), cmp.Compare(a.ID, b.ID))
	}).ID
}
