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

// startOnNewSession prepares the start write of a run that creates its
// session under the id this instance minted for it (r.sessionID): the
// session is written with the run's record and first message (writeStart),
// not now.
func (r *run) startOnNewSession(opts core.SessionOptions) {
	r.startSession = core.NewSession{ID: r.sessionID, Tags: opts.Tags, AgentID: r.agent.ID}
	r.startWrite = core.RunWrite{Session: &r.startSession, SessionID: r.sessionID}
	r.start = &r.startWrite
}

// writeStart writes the run's pending start with msgs appended to it.
// After a failure nothing of the start exists, and the run ends without a
// record, as a run whose session could not be created does.
func (r *run) writeStart(ctx context.Context, msgs ...core.Message) error {
	w := r.start
	r.start = nil
	sms, err := toSessionMessages(msgs)
	if err != nil {
		r.unstarted = true
		return err
	}
	w.Messages = sms
	if _, err := r.in.store.WriteRun(ctx, *w); err != nil {
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
// of ending.
func (r *run) writeEnd(ctx context.Context, res outcome, err error) (bool, error) {
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
	ours, werr := r.in.store.WriteRun(ctx, w)
	if errors.Is(werr, core.ErrRunTaken) {
		ours, werr = false, nil // another attempt holds the record's fence
	}
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
