package engine

import (
	"context"
	"errors"

	"github.com/breadai/bread/core"
)

// A run's writes are grouped where nobody can observe the gap, so a short
// run waits for two commits of the store instead of seven (core.RunWriter;
// on PostgreSQL a commit waits for the WAL to reach the disk):
//
//   - its start on a session it creates: the session, its running record
//     and the user's message, written as one before agent:run:start tells
//     a client the session's id (before the BeforeRun hooks, when there
//     are any, since a hook may read the session);
//   - its end: the messages of its last turn and its ended record, written
//     as one before agent:run:end, when no AfterRun hook could read the
//     session between them.
//
// Both only with a store whose core.RunWriter makes them atomic; on
// another the run writes one at a time, as before. Durability is
// unchanged: every write is committed before the crumb that tells a client
// about it, and a failed end write fails the run as a failed message write
// did (the write is not retried: a retry of one whose commit was lost in
// transit would store the answer twice).
//
// With a store that writes crumbs in the same commit
// (core.Storage.WritesRunCrumbs), the crumb that tells a client of each
// write goes with it, numbered (chokePoint.fold): agent:run:start with the
// start, and with the end the run's crumbs not logged yet (its text) and
// agent:run:end. A short run then commits twice, where the crumb log's
// own write after its end made a third commit the response waited for.

// startOnNewSession prepares the start write of a run that creates its
// session under the id this instance minted for it (r.sessionID): the
// session is written with the run's record and first message (writeStart),
// not now.
func (r *run) startOnNewSession(opts core.SessionOptions) {
	r.startSession = core.NewSession{ID: r.sessionID, Tags: opts.Tags, AgentID: r.agent.ID}
	r.startWrite = core.RunWrite{Session: &r.startSession, SessionID: r.sessionID}
	r.start = &r.startWrite
}

// writeStart writes the run's pending start with msgs appended to it, and
// with the log entry of told (agent:run:start, nil when the start is
// written before the hooks) where the store allows (fold). After a failure
// nothing of the start exists, and the run ends without a record, as a
// run whose session could not be created does.
func (r *run) writeStart(ctx context.Context, told core.Crumb, msgs ...core.Message) error {
	w := r.start
	r.start = nil
	sms, err := toSessionMessages(msgs)
	if err != nil {
		r.unstarted = true
		return err
	}
	w.Messages = sms
	w.Crumbs = r.fold(told)
	_, err = r.in.store.WriteRun(ctx, *w)
	r.settle(told, w.Crumbs, err == nil)
	w.Crumbs = nil
	if err != nil {
		r.unstarted = true
		return err
	}
	if len(sms) > 0 {
		r.wrote = true
		r.in.sessions.wrote(r.sessionID, len(sms))
	}
	return nil
}

// defersEnd reports whether the run's last messages may wait for its
// ended record: the store keeps records and writes both as one atomic unit,
// and no AfterRun hook runs between the two.
func (r *run) defersEnd() bool {
	return r.in.records.keeps && r.in.store.WritesRuns() && !r.hooks.hasAfter()
}

// persistLast persists the messages of the run's last turn: with its
// ended record (recordEnd) when the run defers its end, else now.
func (r *run) persistLast(ctx context.Context, msgs ...core.Message) error {
	if len(msgs) == 0 || !r.defersEnd() {
		return r.persist(ctx, msgs...)
	}
	sms, err := toSessionMessages(msgs)
	if err != nil {
		return err
	}
	r.last = append(r.last, sms...)
	return nil
}

// flushLast persists the deferred messages of the last turn now: the run
// goes on (a retry reads them back), so they cannot wait for its end.
func (r *run) flushLast(ctx context.Context) error {
	sms := r.last
	r.last = nil
	if len(sms) == 0 {
		return nil
	}
	return r.persistStored(ctx, sms)
}

// writeEnd records how the run ended together with what it has not
// written yet: its start, when it ended before writing it (the session and
// its final record), or its last turn's messages, as its owner's end
// (core.RunWrite.Owner: nothing is written when another instance took the
// record meanwhile). It reports whether the run's end is its own, as
// records.ended does, and returns the write's error only when it held
// messages: the run then has not stored its answer and must fail instead
// of ending. told, when set, is the agent:run:end the write logs with it
// where the store allows (fold).
func (r *run) writeEnd(ctx context.Context, res outcome, err error, told core.Crumb) (bool, error) {
	ctx = context.WithoutCancel(ctx)
	rc := r.in.records
	var w core.RunWrite
	if r.start != nil {
		w = *r.start
		r.start = nil
		if rc.keeps {
			// Nothing of the run is stored: no other instance knows it.
			r.endRecord = rc.finalRecord(rc.runningRecord(ctx, r.record()), res, err)
			w.Run = &r.endRecord
		}
	} else {
		r.endRecord = rc.finalRecord(r.record(), res, err)
		w = core.RunWrite{SessionID: r.sessionID, Messages: r.last, Run: &r.endRecord, Owner: rc.owner}
		r.last = nil
	}
	w.Crumbs = r.fold(told)
	ours, werr := r.in.store.WriteRun(ctx, w)
	if werr != nil && r.landed(ctx, werr, w.Crumbs) {
		ours, werr = true, nil
	}
	if errors.Is(werr, core.ErrRunTaken) {
		ours, werr = false, nil // another attempt holds the record's fence
	}
	if werr != nil && len(w.Crumbs) > 0 && !unavailable(werr) {
		// Refused whole, and not for want of the store (a crumb seq the
		// log holds already, say): the answer does not fail for its
		// crumbs. It is written again without them, and they go to the
		// writer, whose failure disables the run's log as it always did.
		r.settle(told, w.Crumbs, false)
		w.Crumbs = nil
		if ours, werr = r.in.store.WriteRun(ctx, w); errors.Is(werr, core.ErrRunTaken) {
			ours, werr = false, nil
		}
	}
	r.settle(told, w.Crumbs, werr == nil && ours)
	switch {
	case werr == nil && !ours:
		rc.taken(*w.Run)
		return false, nil
	case werr == nil:
		if len(w.Messages) > 0 {
			r.wrote = true
			r.in.sessions.wrote(r.sessionID, len(w.Messages))
		}
		return true, nil
	case len(w.Messages) > 0:
		return true, werr
	}
	r.in.log.Warn("bread: recording a run's end failed", append(runAttrs(r.id, r.agent.ID, r.sessionID), "error", werr)...)
	return true, nil
}

// endLogged records how the run ended, as records.ended does, for a run
// that holds no writes back, with told's log entry (and the run's entries
// not logged yet) in the same write where the store allows (fold): its
// record and the crumb that ends its log commit together. Found by the
// chaos harness: runs recorded completed or failed whose log never ended,
// their replica SIGKILLed between the end record's commit and the crumb
// log's own write after it; no sweeper looks at an ended record. A write
// cut off whose crumbs the log holds landed; one that failed otherwise
// gives its crumbs back to the writer and the record is written alone, as
// before, with records.ended's retries.
func (r *run) endLogged(ctx context.Context, res outcome, err error, told core.Crumb) bool {
	rc := r.in.records
	entries := r.fold(told)
	if len(entries) == 0 || !rc.keeps {
		r.settle(told, entries, false)
		return rc.ended(ctx, r.record(), res, err)
	}
	ctx = context.WithoutCancel(ctx)
	r.endRecord = rc.finalRecord(r.record(), res, err)
	w := core.RunWrite{SessionID: r.sessionID, Run: &r.endRecord, Owner: rc.owner, Crumbs: entries}
	ours, werr := r.in.store.WriteRun(ctx, w)
	if werr != nil && r.landed(ctx, werr, entries) {
		ours, werr = true, nil
	}
	if errors.Is(werr, core.ErrRunTaken) {
		ours, werr = false, nil // another attempt holds the record's fence
	}
	r.settle(told, entries, werr == nil && ours)
	switch {
	case werr != nil:
		return rc.ended(ctx, r.record(), res, err)
	case !ours:
		rc.taken(r.endRecord)
		return false
	}
	return true
}

// fold hands told's log entry, with the run's entries not logged yet, to
// a write of the run (chokePoint.fold), when the store writes them in the
// write's commit and the run's crumbs pass the public stream's choke
// point; nil otherwise (told is then logged when it passes, as before).
func (r *run) fold(told core.Crumb) []core.CrumbLogEntry {
	if told == nil || !r.in.store.WritesRunCrumbs() {
		return nil
	}
	f, ok := r.out.(foldingSink)
	if !ok {
		return nil
	}
	return f.fold(told)
}

// settle tells the choke point whether the write fold's entries went with
// committed.
func (r *run) settle(told core.Crumb, entries []core.CrumbLogEntry, committed bool) {
	if len(entries) > 0 {
		r.out.(foldingSink).settle(told, entries, committed)
	}
}

// landed reports whether a run write that failed for want of the store
// (STORE_UNAVAILABLE: a connection cut under it) committed all the same,
// its answer lost in transit: the write is atomic, so its last crumb in
// the log says it did. Without it the run would fail with an answer and
// agent:run:end stored.
func (r *run) landed(ctx context.Context, err error, entries []core.CrumbLogEntry) bool {
	if len(entries) == 0 || !unavailable(err) {
		return false
	}
	last := entries[len(entries)-1]
	held, gerr := r.in.store.GetCrumbs(ctx, last.RunID, last.Seq-1, 1)
	return gerr == nil && sameEntries(held, entries[len(entries)-1:])
}

// toSessionMessages encodes msgs for the store.
func toSessionMessages(msgs []core.Message) ([]core.SessionMessage, error) {
	sms := make([]core.SessionMessage, len(msgs))
	for i, m := range msgs {
		var err error
		if sms[i], err = toSessionMessage(m); err != nil {
			return nil, err
		}
	}
	return sms, nil
}
