package engine

import (
	"context"
	"errors"

	"github.com/breadai/bread/core"
)

// stillOurs checks, before a durable write of the run, that this instance
// still holds it, when its last renewal is old enough (half a lease) that
// it may have been paused (SIGSTOP) or cut off beyond its leases: a
// resumed run still holds its checkpoint's claim, any other run has a
// record not declared lost nor run by another instance. Found by the chaos
// harness: a resumer paused past its claim and lease, whose checkpoint
// another replica had resumed meanwhile, went on on SIGCONT, and both
// appended the approved tool's result. The keeper's fence stops such a run
// at its next renewal; this closes the window before it. A check that
// cannot read the store lets the write go (the write meets the same store).
// A renewal that follows a gap longer than a lease (gapAt) makes every run
// held since before it check once: that renewal succeeds for what is
// still held, and says nothing of what lapsed meanwhile. It returns
// errLeaseLost when the run is not this instance's any more.
func (r *run) stillOurs(ctx context.Context) error {
	rc := r.in.records
	now := rc.in.nowMillis()
	if now-rc.renewedAt.Load() <= rc.lease.Milliseconds()/2 && rc.gapAt.Load() <= r.heldSince {
		return nil
	}
	if err := r.holds(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	r.heldSince = now
	return nil
}

// holds reads whether the run is still this instance's (see stillOurs).
func (r *run) holds(ctx context.Context) error {
	rc := r.in.records
	if cp := r.resumedFrom; cp != nil {
		cur, err := r.in.store.GetCheckpoint(ctx, cp.ID)
		switch {
		case errors.Is(err, core.ErrCheckpointNotFound):
			return errLeaseLost // resumed and settled by another instance
		case err != nil:
			return nil
		case cur.ClaimedBy != rc.owner:
			return errLeaseLost
		}
		return nil
	}
	if !rc.keeps {
		return nil
	}
	cur, err := r.in.store.GetRun(ctx, r.id)
	if err == nil && rc.superseded(cur) {
		return errLeaseLost
	}
	return nil
}

// fenced reports whether err is the run's loss to another instance
// (errLeaseLost, from the keeper's fence or stillOurs, or a store's
// RUN_TAKEN: a write refused under the run's core.RunFence): the run then
// writes nothing more, neither into its session nor its record nor its
// checkpoint, which are the other instance's now.
func fenced(err error) bool {
	var be *core.BreadError
	return errors.As(err, &be) && (be == errLeaseLost || be.Code == core.CodeRunTaken)
}
