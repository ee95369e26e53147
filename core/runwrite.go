package core

import "context"

// RunWriter is an optional part of a store: it makes what one moment of a
// run changes as one atomic unit, in one commit. The engine writes a run's
// start on a new session (the session, its running record, the user's
// message) and a run's end (the answer, the ended record) through it, so a
// short run waits for two commits instead of one per write: on a database
// whose commit waits for its log to reach the disk (PostgreSQL), those
// waits are most of a short run's time. Storage.WriteRun makes the same
// writes one at a time for a store without it.
type RunWriter interface {
	// WriteRun makes the writes of w, all or none, and returns once they
	// are committed: Session, when set, is created as CreateSession
	// creates it (its ID is set and equals SessionID); Messages are
	// appended to session SessionID in order and touch its UpdatedAt, as
	// AddMessage does; Run, when set, is put as RunStore.PutRun puts it,
	// or, when Owner is set, as RunStore.EndRun writes it for Owner: when
	// the stored record was taken from Owner, nothing of w is written and
	// WriteRun reports false; Crumbs, when set, are appended as
	// CrumbLog.AppendCrumbs appends them (a seq already logged fails the
	// whole write). A session that is neither created here nor stored is
	// ErrSessionNotFound, and nothing is written.
	WriteRun(ctx context.Context, w RunWrite) (bool, error)
}

// RunCrumbWriter is a RunWriter that writes RunWrite.Crumbs into its own
// crumb log, in the run write's one commit. The engine then hands a run's
// log entries to its start and end writes instead of appending them in a
// commit of their own after each (a short run commits twice, not three
// times). RunCrumbLog returns the store itself: Storage folds crumbs into
// run writes only when that is the crumb log it found, so a type that
// embeds such a store and replaces its AppendCrumbs (a wrapper that times,
// counts or fails the appends) is not bypassed by the embedded WriteRun.
type RunCrumbWriter interface {
	RunWriter
	RunCrumbLog() CrumbLog
}

// RunWrite is the input of RunWriter.WriteRun.
type RunWrite struct {
	// Session, when set, is created first; its ID must be set.
	Session *NewSession
	// SessionID is the session Messages go to (and Session's ID).
	SessionID string
	// Messages are appended in order; the store assigns their ID and
	// SessionID.
	Messages []SessionMessage
	// Run, when set, is put last, so its session exists.
	Run *RunRecord
	// Owner, when set with Run, makes the write a run's end by its owner
	// (RunStore.EndRun): it writes nothing when the record was taken from
	// Owner, so an answer never follows the RUN_LOST another instance
	// logged.
	Owner string
	// Crumbs, when set, are crumb-log entries appended with the rest (the
	// store needs a CrumbLog): the entries of a run not logged yet and the
	// crumb that tells a client of this write, so the log and what it
	// tells commit together.
	Crumbs []CrumbLogEntry
}

// WritesRunCrumbs reports whether WriteRun writes RunWrite.Crumbs in its
// one atomic write into the crumb log AppendCrumbs writes to (a
// RunCrumbWriter whose RunCrumbLog is that log). Otherwise WriteRun
// appends them after the rest, as one more write.
func (s *Storage) WritesRunCrumbs() bool { return s.foldsCrumbs }

// WritesRuns reports whether WriteRun is one atomic write: the store is a
// RunWriter. Without one, WriteRun makes its writes one at a time, and a
// failure may leave the first of them written.
func (s *Storage) WritesRuns() bool { return s.writer != nil }

// empty reports whether w writes nothing.
func (w RunWrite) empty() bool {
	return w.Session == nil && len(w.Messages) == 0 && w.Run == nil && len(w.Crumbs) == 0
}

// WriteRun makes the writes of w (see RunWriter): in one atomic write when
// the store is a RunWriter, else one after the other (CreateSession, the
// messages in one AddMessage or SuspendRun, PutRun or EndRun), each
// committed before the next begins; then the messages are written even
// when EndRun finds the record taken. A Session without an ID or with one other than
// SessionID is VALIDATION_ERROR; a Run on a store without a RunStore, and
// Crumbs on one without a CrumbLog, are NOT_IMPLEMENTED. Crumbs are
// appended last, after a Run EndRun did not refuse. Session.Owner is set as CreateSession sets it, and
// messages for an existing session are refused, under the ownership rule,
// as AddMessage refuses them.
func (s *Storage) WriteRun(ctx context.Context, w RunWrite) (bool, error) {
	if err := s.open(); err != nil {
		return false, err
	}
	if w.empty() {
		return true, nil
	}
	if w.Run != nil {
		if err := s.can(StoreRuns); err != nil {
			return false, err
		}
	}
	if len(w.Crumbs) > 0 {
		if err := s.can(StoreCrumbLog); err != nil {
			return false, err
		}
	}
	if w.Session != nil {
		if w.Session.ID == "" || w.Session.ID != w.SessionID {
			return false, &BreadError{Code: CodeValidationError, Message: "a run write creates its session under SessionID, which must be set"}
		}
		if owner := OwnerKey(IdentityFrom(ctx)); owner != "" && w.Session.Owner == "" {
			n := *w.Session
			n.Owner = owner
			w.Session = &n
		}
	} else if len(w.Messages) > 0 {
		if err := s.mayUseSession(ctx, w.SessionID); err != nil {
			return false, err
		}
	}
	if s.writer != nil {
		if s.foldsCrumbs || len(w.Crumbs) == 0 {
			return s.writer.WriteRun(ctx, w)
		}
		// The crumbs go to the log found, which the writer's is not.
		crumbs := w.Crumbs
		w.Crumbs = nil
		if !w.empty() {
			if ours, err := s.writer.WriteRun(ctx, w); err != nil || !ours {
				return ours, err
			}
		}
		return true, s.crumbs.AppendCrumbs(ctx, crumbs)
	}
	if w.Session != nil {
		if _, err := s.store.CreateSession(ctx, *w.Session); err != nil {
			return false, err
		}
	}
	switch len(w.Messages) {
	case 0:
	case 1:
		if err := s.store.AddMessage(ctx, w.SessionID, w.Messages[0]); err != nil {
			return false, err
		}
	default:
		if err := s.store.SuspendRun(ctx, w.SessionID, w.Messages); err != nil {
			return false, err
		}
	}
	switch {
	case w.Run == nil:
	case w.Owner != "":
		ours, err := s.runs.EndRun(ctx, *w.Run, w.Owner)
		if err != nil || !ours {
			return ours, err
		}
	default:
		if err := s.runs.PutRun(ctx, *w.Run); err != nil {
			return false, err
		}
	}
	if len(w.Crumbs) > 0 {
		return true, s.crumbs.AppendCrumbs(ctx, w.Crumbs)
	}
	return true, nil
}
