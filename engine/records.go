package engine

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/breadai/bread/core"
)

// DefaultRunLease is how long a run's lease lasts unless its owner renews it;
// the owner renews every third of it, and every instance sweeps for lapsed
// leases every half of it. A tail of a run whose process died ends with
// RUN_LOST within about one and a half leases.
const DefaultRunLease = 15 * time.Second

// records keeps what makes runs survive this process: the store's run
// records (core.RunStore: a record per run, this instance's leases renewed
// while it runs, lapsed leases of dead instances turned into lost runs with
// a durable RUN_LOST crumb) and the checkpoint claims of resumes in flight,
// renewed by the same keeper. Without a RunStore the record methods are
// no-ops; claims work with every store.
type records struct {
	in    *Instance
	keeps bool // the store keeps run records (core.StoreRuns)
	owner string
	lease time.Duration

	stop   chan struct{}
	done   chan struct{}
	closed bool // close ran: only Start and Stop call it, one at a time

	// renewedAt is when the keeper last renewed this instance's claims
	// (Unix ms): long enough ago, the instance may have been paused or cut
	// off past its leases, and a run checks it still holds what it writes
	// for (stillOurs).
	renewedAt atomic.Int64
	// gapAt is when the last renewal that followed a gap longer than a
	// lease succeeded (Unix ms): a run begun before it checks once.
	gapAt atomic.Int64
	// minted counts the fence tokens this instance minted (mint).
	minted atomic.Uint64
}

// mint returns a new core.RunFence token for an attempt at a run, unique
// across instances (the owner is), "" when the store keeps no records.
func (rc *records) mint() string {
	if !rc.keeps {
		return ""
	}
	return rc.owner + "/" + strconv.FormatUint(rc.minted.Add(1), 36)
}

func newRecords(in *Instance, owner string) *records {
	lease := in.cfg.RunLease
	if lease <= 0 {
		lease = DefaultRunLease
	}
	return &records{in: in, keeps: in.store.Has(core.StoreRuns), owner: owner, lease: lease}
}

// start launches the keeper goroutine (renew and sweep), owned by records
// and stopped by close. The first sweep runs at once, so runs a dead
// process left behind end as soon as their leases lapse.
func (rc *records) start() {
	rc.renewedAt.Store(rc.in.nowMillis())
	rc.stop, rc.done = make(chan struct{}), make(chan struct{})
	go rc.keep()
}

// close stops the keeper and waits for it; once it is stopped, close does
// nothing (a failed Start closes it, then Stop).
func (rc *records) close() {
	if rc.stop == nil || rc.closed {
		return
	}
	rc.closed = true
	close(rc.stop)
	<-rc.done
}

func (rc *records) keep() {
	defer close(rc.done)
	renew := rc.in.clock.NewTicker(rc.lease / 3)
	defer renew.Stop()
	sweep := rc.in.clock.NewTicker(rc.lease / 2)
	defer sweep.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-rc.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	rc.sweep(ctx)
	for {
		select {
		case <-rc.stop:
			return
		case <-renew.C():
			now := rc.in.clock.Now()
			until := now.Add(rc.lease).UnixMilli()
			if _, err := rc.in.store.RenewCheckpointClaims(ctx, rc.owner, until); err != nil {
				if ctx.Err() == nil {
					rc.in.log.Warn("bread: renewing checkpoint claims failed; another instance may resume them again", "owner", rc.owner, "error", err)
				}
			} else {
				if now.UnixMilli()-rc.renewedAt.Load() > rc.lease.Milliseconds() {
					// Renewals stopped for longer than a lease (paused,
					// cut off): claims and leases may have lapsed and
					// been taken; every run older than this checks.
					rc.gapAt.Store(now.UnixMilli())
				}
				rc.renewedAt.Store(now.UnixMilli())
			}
			if !rc.keeps {
				continue
			}
			n, err := rc.in.store.RenewRunLeases(ctx, rc.owner, until)
			if err != nil {
				if ctx.Err() == nil {
					rc.in.log.Warn("bread: renewing run leases failed; other instances may declare this instance's runs lost", "owner", rc.owner, "error", err)
				}
				continue
			}
			rc.fence(ctx, n)
		case <-sweep.C():
			rc.sweep(ctx)
		}
	}
}

// sweep ends every run whose lease lapsed: one LoseRun per run decides,
// across replicas, who writes its RUN_LOST crumb.
func (rc *records) sweep(ctx context.Context) {
	if !rc.keeps {
		return
	}
	for {
		now := rc.in.nowMillis()
		lapsed, err := rc.in.store.ExpiredRuns(ctx, now, 100)
		if err != nil {
			if ctx.Err() == nil {
				rc.in.log.Warn("bread: looking for lost runs failed", "error", err)
			}
			return
		}
		for _, r := range lapsed {
			won, err := rc.in.store.LoseRun(ctx, r.ID, now)
			if err != nil {
				if ctx.Err() == nil {
					rc.in.log.Warn("bread: marking a run lost failed", append(runAttrs(r.ID, r.AgentID, r.SessionID), "error", err)...)
				}
				return
			}
			if won {
				rc.lost(ctx, r, now)
			}
		}
		if len(lapsed) < 100 {
			return
		}
	}
}

// sweepLapsed declares lost, as the sweeper would, each running run of
// runs, other than except, whose lease lapsed before now. A run claiming a
// session calls it
// on the session's running runs: without it, the claimant went first past
// a lapsed run and wrote its turn, and the sweeper, coming later, closed
// the lost run's turn after it, between the claimant's tool call and its
// result (the chaos harness, 10 minutes, seed 11). A run another instance
// declares lost at the same time is left to it (LoseRun decides).
func (rc *records) sweepLapsed(ctx context.Context, runs []core.RunRecord, except string, now int64) {
	if !rc.keeps {
		return
	}
	for _, r := range runs {
		if r.ID == except || r.Status != core.RunRunning || r.LeaseUntil >= now {
			continue
		}
		won, err := rc.in.store.LoseRun(ctx, r.ID, now)
		if err != nil || !won {
			continue
		}
		rc.lost(ctx, r, now)
	}
}

// lost writes the durable end of a run nobody runs any more, so every tail
// and every replay of it ends: an agent:error RUN_LOST after its last logged
// crumb, in the crumb log and on the bus.
//
// A run whose log ended already is not lost: its owner logged its end and
// died (or was cut off) before its record said so. The logged end stands
// whatever the run's onLost policy or its resume's checkpoint would do
// with a lost run (a retry, a resume again), since either would go on
// after the end every tail and replay saw; the record is made to agree.
func (rc *records) lost(ctx context.Context, r core.RunRecord, now int64) {
	if end := rc.in.loggedEnd(ctx, r.ID); end != nil {
		rc.agree(ctx, r, *end, now)
		return
	}
	if rc.in.onLostRetries(ctx, r) {
		// Its job, handed out again once the queue finds it stuck, runs
		// it again (package worker): until then it is queued, and its tails
		// wait for that attempt.
		rc.in.log.Warn("bread: background run lost: its job will retry it", append(runAttrs(r.ID, r.AgentID, r.SessionID), "attempt", r.Attempt)...)
		r.Status, r.Owner, r.LeaseUntil, r.ErrorCode, r.UpdatedAt = core.RunQueued, "", 0, "", now
		rc.putLost(ctx, r)
		return
	}
	if rc.resumable(ctx, r) {
		// A resume that died leaves its checkpoint to be resumed again, and
		// the retry continues this run: it is not ended. Its record goes
		// back to suspended on that checkpoint, with RUN_LOST saying a
		// resume of it was lost (a client tells "waiting for a retry" from
		// "ended" by the status, which is not final); its session stays as
		// it is, and its tails keep waiting for the retry's crumbs.
		rc.in.log.Warn("bread: resume lost: the instance resuming it stopped renewing its lease; its checkpoint waits for the resume to be retried", append(runAttrs(r.ID, r.AgentID, r.SessionID), "checkpoint_id", r.CheckpointID)...)
		r.Status, r.Owner, r.LeaseUntil, r.ErrorCode, r.UpdatedAt = core.RunSuspended, "", 0, core.CodeRunLost, now
		rc.putLost(ctx, r)
		return
	}
	rc.in.log.Warn("bread: run lost: the instance running it stopped renewing its lease", runAttrs(r.ID, r.AgentID, r.SessionID)...)
	if rc.sessionTailMayBeIts(ctx, r) {
		rc.in.closeInterrupted(ctx, r.SessionID, r.UpdatedAt, core.CodeRunLost)
	}
	if end := rc.in.endDurably(ctx, r, now, &core.BreadError{Code: core.CodeRunLost, Message: "the run was lost: the process running it stopped"}); end != nil {
		// Its owner logged the run's end meanwhile (it was paused between
		// its log write and its record's).
		rc.agree(ctx, r, *end, now)
	}
}

// sessionTailMayBeIts says whether lost should close the session of r, a
// run just declared lost: whether its last messages may be r's turn, left
// open. They are not when r wrote nothing (it logged no crumb, on a store
// that logs a run's start with its first messages in one commit: it died
// waiting for its session, or before its start committed). And lost
// leaves the session alone while another run of it is running: that run
// holds the session or waits for it, and closes what r left open itself,
// once it has it and before it writes its own turn (claimSession), where a
// closing turn lost appended could land after that run's tool call,
// before its result (the chaos harness, 10 minutes, seed 11: a run that
// never started, declared lost 13 ms after a later run of its session
// stored its call).
func (rc *records) sessionTailMayBeIts(ctx context.Context, r core.RunRecord) bool {
	if r.SessionID == "" {
		return false
	}
	st := rc.in.store
	if st.Has(core.StoreCrumbLog) && st.WritesRunCrumbs() {
		if n, err := st.MaxCrumbSeq(ctx, r.ID); err == nil && n == 0 {
			return false
		}
	}
	if st.Has(core.StoreRunList) {
		running, err := st.ListRuns(ctx, core.RunFilter{SessionID: r.SessionID, Status: core.RunRunning})
		if err == nil && slices.ContainsFunc(running, func(o core.RunRecord) bool { return o.ID != r.ID }) {
			return false
		}
	}
	return true
}

// putLost writes what lost decided for a run it won LoseRun on (queued
// for its job's retry, suspended for a resume's) only while the record is
// as LoseRun left it, held by no attempt: under a core.RunFence of the
// empty token, the one LoseRun writes. r was read before LoseRun, so it
// still carries the lost attempt's token, which is not written back.
//
// Found under -race and load (TestLostBackgroundRunIsRetriedFromBeforeItsAttempt):
// the run's job, handed out again, found the record lost between the
// sweeper's LoseRun and this write and retried it; this write, plain,
// then turned the retry's running record queued and gave it the dead
// attempt's token back, so the retry's writes were refused as taken, the
// dead (or paused) attempt's were admitted again, and the run stayed
// queued with no job left to run it.
func (rc *records) putLost(ctx context.Context, r core.RunRecord) {
	r.Fence = ""
	rc.put(core.WithRunFence(ctx, core.RunFence{RunID: r.ID}), r)
}

// agree makes the record of a run whose end its owner logged but could
// not record (its end write failed, or it died or was paused between the
// two) say how the log says it ended.
func (rc *records) agree(ctx context.Context, r core.RunRecord, end core.CrumbLogEntry, now int64) {
	rc.in.log.Warn("bread: a run's end was logged but not recorded: its record follows its log", append(runAttrs(r.ID, r.AgentID, r.SessionID), "type", end.Type)...)
	r.Status, r.ErrorCode = core.RunCompleted, ""
	if e, ok := end.Crumb.(*core.AgentError); ok && e.Error != nil {
		r.Status, r.ErrorCode = core.RunFailed, e.Error.Code
		switch e.Error.Code {
		case core.CodeRunCancelled:
			r.Status = core.RunCancelled
		case core.CodeRunLost:
			r.Status = core.RunLost
		}
	}
	cp := r.CheckpointID
	r.Owner, r.LeaseUntil, r.UpdatedAt, r.CheckpointID = "", 0, now, ""
	rc.put(ctx, r)
	if cp != "" {
		// A resume's continuation ended: its checkpoint is settled, as
		// its resumer would have settled it.
		rc.settle(ctx, core.CheckpointRecord{ID: cp, RunID: r.ID, AgentID: r.AgentID, SessionID: r.SessionID}, nil)
	}
}

// loggedEnd returns the last entry of run id's crumb log when it is the
// run's end (agent:run:end or agent:error), nil otherwise: the log does
// not end, cannot be read, or the store keeps none.
func (in *Instance) loggedEnd(ctx context.Context, id string) *core.CrumbLogEntry {
	if !in.store.Has(core.StoreCrumbLog) {
		return nil
	}
	max, err := in.store.MaxCrumbSeq(ctx, id)
	if err != nil || max == 0 {
		return nil
	}
	last, err := in.store.GetCrumbs(ctx, id, max-1, 1)
	if err != nil || len(last) != 1 || !core.IsTerminal(last[0].Type) {
		return nil
	}
	return &last[0]
}

// endDurably ends the stream of a run nobody runs: an agent:error with be
// after its last logged crumb, in the crumb log and on the bus, so every
// tail and every replay of it ends. A log that ends already (its last
// crumb is agent:run:end or agent:error) gets no second end: that entry is
// returned, and nothing is written. A crumb of the run's owner that takes
// the seq first (an owner paused past its lease, writing on) moves the end
// after it.
func (in *Instance) endDurably(ctx context.Context, r core.RunRecord, now int64, be *core.BreadError) *core.CrumbLogEntry {
	var seq int64
	crumb := &core.AgentError{
		CrumbBase: core.CrumbBase{AgentID: r.AgentID, RunID: r.ID, SessionID: r.SessionID, Timestamp: now},
		Error:     be,
	}
	if in.store.Has(core.StoreCrumbLog) {
		for attempt := 1; ; attempt++ {
			max, err := in.store.MaxCrumbSeq(ctx, r.ID)
			if err != nil {
				in.log.Warn("bread: reading a run's crumb log to end it failed", append(runAttrs(r.ID, r.AgentID, r.SessionID), "code", be.Code, "error", err)...)
				return nil
			}
			if max > 0 {
				last, err := in.store.GetCrumbs(ctx, r.ID, max-1, 1)
				if err == nil && len(last) == 1 && core.IsTerminal(last[0].Type) {
					return &last[0]
				}
			}
			seq = max + 1
			crumb.Seq = seq
			entry := core.CrumbLogEntry{RunID: r.ID, Seq: seq, SessionID: r.SessionID, AgentID: r.AgentID, Type: core.TypeAgentError, Crumb: crumb, CreatedAt: now}
			err = in.store.AppendCrumbs(ctx, []core.CrumbLogEntry{entry})
			if err == nil {
				break
			}
			if attempt == 3 || core.AsBreadError(err, "").Code != core.CodeValidationError {
				in.log.Warn("bread: logging a run's end failed", append(runAttrs(r.ID, r.AgentID, r.SessionID), "code", be.Code, "error", err)...)
				break
			}
		}
	}
	if err := in.bus.Publish(ctx, core.Frame{RunID: r.ID, Seq: seq, Crumb: crumb}); err != nil {
		in.log.Warn("bread: publishing a run's end failed", append(runAttrs(r.ID, r.AgentID, r.SessionID), "code", be.Code, "error", err)...)
	}
	return nil
}

// claim claims a checkpoint for this instance, for one lease; the keeper
// renews the claim while the resume runs.
func (rc *records) claim(ctx context.Context, checkpointID string) error {
	now := rc.in.clock.Now()
	_, err := rc.in.store.ClaimCheckpoint(ctx, checkpointID, rc.owner, now.UnixMilli(), now.Add(rc.lease).UnixMilli())
	return err
}

// settle ends a claimed checkpoint once its run's part of the continuation
// is recorded (its messages, its record, a new checkpoint if it suspended
// again): the checkpoint is deleted. A run cut short because this instance
// is stopping gives the claim back instead, so another replica can resume
// it at once.
//
// Either write is retried like a run's end (settleRetries): a checkpoint
// whose removal met a terminated connection stayed behind, claimed, its
// claim renewed by this instance for as long as it lived, though its run
// had completed (found by the chaos harness: "answered approvals applied
// exactly once" saw the answered checkpoint still there).
func (rc *records) settle(ctx context.Context, cp core.CheckpointRecord, err error) {
	ctx = context.WithoutCancel(ctx)
	if stoppedByInstance(err) {
		cp.ClaimedBy, cp.ClaimedUntil = "", 0
		if serr := rc.retried(ctx, func() error { return rc.in.store.SaveCheckpoint(ctx, cp) }); serr != nil {
			rc.in.log.Warn("bread: releasing a checkpoint at stop failed; it is resumable once its claim lapses", append(runAttrs(cp.RunID, cp.AgentID, cp.SessionID), "checkpoint_id", cp.ID, "error", serr)...)
		}
		return
	}
	derr := rc.retried(ctx, func() error {
		_, err := rc.in.store.DeleteCheckpoint(ctx, cp.ID)
		if errors.Is(err, core.ErrCheckpointNotFound) {
			return nil // removed already: by a try whose answer was lost, or by another instance
		}
		return err
	})
	if derr != nil {
		rc.in.log.Warn("bread: removing a resumed checkpoint failed", append(runAttrs(cp.RunID, cp.AgentID, cp.SessionID), "checkpoint_id", cp.ID, "error", derr)...)
	}
}

// unclaim gives back this instance's claim on checkpoint cp, if it still
// holds it, without removing it: the resume's run was taken, and the
// checkpoint waits for another resume (its keeper would otherwise renew
// the claim, and the retry would find it claimed for as long as this
// instance lives).
func (rc *records) unclaim(ctx context.Context, cp core.CheckpointRecord) {
	// Not under the run's fence, which refuses this attempt's writes: the
	// claim given back is this instance's own.
	ctx = core.WithRunFence(context.WithoutCancel(ctx), core.RunFence{})
	cur, err := rc.in.store.GetCheckpoint(ctx, cp.ID)
	if err != nil || cur.ClaimedBy != rc.owner {
		return
	}
	cur.ClaimedBy, cur.ClaimedUntil = "", 0
	if err := rc.in.store.SaveCheckpoint(ctx, cur); err != nil {
		rc.in.log.Warn("bread: releasing the checkpoint of a taken resume failed; it is resumable once its claim lapses", append(runAttrs(cp.RunID, cp.AgentID, cp.SessionID), "checkpoint_id", cp.ID, "error", err)...)
	}
}

// settleRetries is how many times settle tries a write the store could
// not make (STORE_UNAVAILABLE): five tries, 100 ms apart and doubling,
// about three seconds in all, as a run's end write.
const settleRetries = 5

// retried calls write until it succeeds, fails with anything but
// STORE_UNAVAILABLE, or was tried settleRetries times, and returns its
// last error. Only for writes that may be made twice (a removal, a
// claim's release).
func (rc *records) retried(ctx context.Context, write func() error) error {
	wait := 100 * time.Millisecond
	err := write()
	for try := 1; err != nil && try < settleRetries && unavailable(err) && ctx.Err() == nil; try++ {
		t := rc.in.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C():
		}
		wait *= 2
		err = write()
	}
	return err
}

// continued reports whether the continuation from checkpoint cp is already
// recorded in its run's record: the run completed or failed, or suspended again on a
// checkpoint of its own that is not a sibling of cp. A resume retried after
// its process died at the very end then removes the checkpoint instead of
// continuing the run a second time. Without a RunStore it is false. It
// also returns the record's fence token (core.RunFence), nil when the
// record could not be read: the resume takes the run only while the
// record still holds it (take), and the resume of a checkpoint of a human
// set keeps it.
func (rc *records) continued(ctx context.Context, cp core.CheckpointRecord) (bool, *string) {
	if !rc.keeps {
		return false, nil
	}
	rec, err := rc.in.store.GetRun(ctx, cp.RunID)
	if err != nil {
		return false, nil
	}
	switch rec.Status {
	case core.RunCompleted, core.RunFailed:
		// Not cancelled: an instance that stops mid-resume records its run
		// cancelled and gives the checkpoint back to be resumed again.
		return true, &rec.Fence
	case core.RunSuspended:
		return rec.CheckpointID != "" && rec.CheckpointID != cp.ID && (cp.Set == nil || cp.Set.Slot(rec.CheckpointID) < 0), &rec.Fence
	case core.RunRunning:
		// Its resumer died after logging the run's end, before recording
		// it (the record still names its lapsed lease): the log says the
		// continuation is done.
		return rc.in.loggedEnd(ctx, cp.RunID) != nil, &rec.Fence
	}
	return false, &rec.Fence
}

// resumable reports whether a lost run was a resume whose checkpoint is
// still there to be resumed again.
func (rc *records) resumable(ctx context.Context, r core.RunRecord) bool {
	if r.CheckpointID == "" {
		return false
	}
	_, err := rc.in.store.GetCheckpoint(ctx, r.CheckpointID)
	return err == nil
}

// running records that this instance runs r from now on. A new run records
// the caller that started it (core.OwnerKey of core.IdentityFrom(ctx)); a
// resumed run's record keeps its starter, whoever resumes it (PutRun never
// replaces StartedBy).
func (rc *records) running(ctx context.Context, r core.RunRecord) {
	if !rc.keeps {
		return
	}
	rc.put(ctx, rc.runningRecord(ctx, r))
}

// take is running for a resume: the record goes running under the
// resume's token only while it still holds held, the token the resume
// read when it claimed its checkpoint (one step in the store, under a
// core.RunFence). It reports false when another attempt took the run
// meanwhile (a resume of the same checkpoint on another instance, while
// this one was paused between its claim and this write).
func (rc *records) take(ctx context.Context, r core.RunRecord, held string) bool {
	if !rc.keeps {
		return true
	}
	rec := rc.runningRecord(ctx, r)
	err := rc.in.store.PutRun(core.WithRunFence(ctx, core.RunFence{RunID: r.ID, Token: held}), rec)
	switch {
	case errors.Is(err, core.ErrRunTaken):
		return false
	case err != nil:
		rc.in.log.Warn("bread: recording a run's state failed", append(runAttrs(r.ID, r.AgentID, r.SessionID), "status", rec.Status, "error", err)...)
	}
	return true
}

// runningRecord is r as running writes it.
func (rc *records) runningRecord(ctx context.Context, r core.RunRecord) core.RunRecord {
	if r.StartedBy == "" {
		r.StartedBy = core.OwnerKey(core.IdentityFrom(ctx))
	}
	now := rc.in.clock.Now()
	r.Status, r.Owner, r.LeaseUntil = core.RunRunning, rc.owner, now.Add(rc.lease).UnixMilli()
	r.ErrorCode = ""
	r.CreatedAt, r.UpdatedAt = now.UnixMilli(), now.UnixMilli()
	return r
}

// ended records how a run this instance ran stopped running. It reports
// false when another instance ended the run meanwhile (superseded: this
// instance was paused or cut off beyond its lease, and another declared
// the run lost): the record stays as that instance wrote it, and the run
// must log and publish nothing more, its RUN_LOST being its end.
func (rc *records) ended(ctx context.Context, r core.RunRecord, res outcome, err error) bool {
	if !rc.keeps {
		return true
	}
	r = rc.finalRecord(r, res, err)
	if rc.putEnd(context.WithoutCancel(ctx), r) {
		return true
	}
	rc.taken(r)
	return false
}

// taken notes that another instance ended run r while this one ran it.
func (rc *records) taken(r core.RunRecord) {
	rc.in.quietEnds.Store(r.ID, struct{}{})
	rc.in.log.Warn("bread: a run of this instance was ended by another while it ran (this instance paused or cut off beyond its lease): its record stays as that instance wrote it",
		append(runAttrs(r.ID, r.AgentID, r.SessionID), "status", r.Status)...)
}

// finalRecord is r ended by res or err, as this instance writes it.
func (rc *records) finalRecord(r core.RunRecord, res outcome, err error) core.RunRecord {
	r.Owner, r.LeaseUntil, r.UpdatedAt, r.CheckpointID = "", 0, rc.in.nowMillis(), ""
	switch {
	case err != nil:
		be := core.AsBreadError(err, core.CodeAgentError)
		r.Status, r.ErrorCode = core.RunFailed, be.Code
		switch be.Code {
		case core.CodeRunCancelled:
			r.Status = core.RunCancelled
		case core.CodeRunLost:
			r.Status = core.RunLost
		}
	case res.suspended:
		r.Status, r.CheckpointID = core.RunSuspended, res.checkpointID
	default:
		r.Status = core.RunCompleted
	}
	return r
}

// putEnd writes the end of a run with EndRun, so the write never
// overwrites a record another instance took meanwhile (found by the chaos
// harness: a replica paused between reading its record and writing its
// end turned a lost run completed). It reports false when the record was
// taken. A failed write is retried a few times (about three seconds in
// all): a record left running would be renewed by this instance's keeper
// for as long as it lives, a run that never ends for its tails and its
// session (the harness again: a connection terminated under the final
// write left a completed run running for good).
func (rc *records) putEnd(ctx context.Context, r core.RunRecord) bool {
	wait := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		wrote, err := rc.in.store.EndRun(ctx, r, rc.owner)
		if err == nil {
			return wrote
		}
		if errors.Is(err, core.ErrRunTaken) {
			return false // another attempt holds the record's fence
		}
		if attempt == 5 || ctx.Err() != nil {
			rc.in.log.Warn("bread: recording a run's end failed", append(runAttrs(r.ID, r.AgentID, r.SessionID), "status", r.Status, "attempts", attempt, "error", err)...)
			return true
		}
		t := rc.in.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C():
		}
		wait *= 2
	}
}

// put writes a record; like the crumb log, a failed write never fails the
// run.
func (rc *records) put(ctx context.Context, r core.RunRecord) {
	if err := rc.in.store.PutRun(ctx, r); err != nil && !errors.Is(err, core.ErrRunTaken) {
		rc.in.log.Warn("bread: recording a run's state failed", append(runAttrs(r.ID, r.AgentID, r.SessionID), "status", r.Status, "error", err)...)
	}
}

// superseded reports whether a record this instance ran is no longer its
// own: another instance's sweeper declared it lost (and wrote its durable
// RUN_LOST, which every tail has seen), or another instance runs it now.
// Writing its end then would contradict what clients were told.
func (rc *records) superseded(cur core.RunRecord) bool {
	return cur.Status == core.RunLost || (cur.Status == core.RunRunning && cur.Owner != "" && cur.Owner != rc.owner)
}

// errLeaseLost is the cause of a run this instance stops because another
// instance declared it lost while this one could not renew its lease.
var errLeaseLost = &core.BreadError{Code: core.CodeRunLost, Message: "the run was declared lost by another instance while this one could not renew its lease"}

// fence stops the runs of this instance that are not its own any more: a
// renewal that renewed fewer leases (renewed) than this instance tracks
// runs means some may have been declared lost while it was paused or cut
// off from the store; each such run is cancelled, so it writes nothing
// more into its session or its log.
func (rc *records) fence(ctx context.Context, renewed int) {
	rc.in.runsMu.Lock()
	if len(rc.in.runs) <= renewed {
		rc.in.runsMu.Unlock()
		return
	}
	ids := make([]string, 0, len(rc.in.runs))
	for id := range rc.in.runs {
		ids = append(ids, id)
	}
	rc.in.runsMu.Unlock()
	for _, id := range ids {
		cur, err := rc.in.store.GetRun(ctx, id)
		if err != nil || !rc.superseded(cur) {
			continue
		}
		rc.in.runsMu.Lock()
		cancel := rc.in.runs[id]
		rc.in.runsMu.Unlock()
		if cancel != nil {
			rc.in.log.Warn("bread: stopping a run another instance declared lost", runAttrs(cur.ID, cur.AgentID, cur.SessionID)...)
			cancel(errLeaseLost)
		}
	}
}
