package memory

import (
	"context"

	"github.com/breadai/bread/core"
)

// WriteRun implements core.RunWriter: every check first, then every
// change, under one hold of the store's lock, so a refused write changes
// nothing and readers never see part of one.
func (s *Store) WriteRun(ctx context.Context, w core.RunWrite) (bool, error) {
	var info core.Session
	if n := w.Session; n != nil {
		if n.ID == "" || n.ID != w.SessionID {
			return false, invalid("a run write creates its session under its session id, which must be set")
		}
		info = core.Session{ID: n.ID, Tags: storedTags(n.Tags), AgentID: n.AgentID, Owner: n.Owner}
	}
	var few [2]core.SessionMessage // a run's start or end has one or two
	prepared := few[:0]
	for _, m := range w.Messages {
		prepared = append(prepared, s.prepareMessage(w.SessionID, m))
	}
	if err := checkEntries(w.Crumbs); err != nil {
		return false, err
	}
	if err := s.lock(ctx); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	if err := s.checkFence(ctx); err != nil {
		return false, err
	}
	_, exists := s.sessions[w.SessionID]
	creates := w.Session != nil
	switch {
	case creates && exists:
		return false, invalid("session %q already exists", w.SessionID)
	case !creates && !exists && len(prepared) > 0:
		return false, notFound(core.ErrSessionNotFound, "session %q not found", w.SessionID)
	}
	if r := w.Run; r != nil {
		cur, known := s.runRecords[r.ID]
		if known && w.Owner != "" && (cur.Status == core.RunLost || (cur.Status == core.RunRunning && cur.Owner != "" && cur.Owner != w.Owner)) {
			return false, nil // taken from its owner: EndRun's condition
		}
		if !known && r.SessionID != "" && s.sessions[r.SessionID] == nil && (!creates || r.SessionID != w.SessionID) {
			return false, notFound(core.ErrSessionNotFound, "session %q not found", r.SessionID)
		}
	}
	if err := s.checkSeqs(w.Crumbs); err != nil {
		return false, err
	}
	now := s.nowMillis()
	var sess *session
	if creates {
		info.CreatedAt, info.UpdatedAt = now, now
		switch len(prepared) {
		case 0:
			sess = s.addSession(info)
		case 1:
			// A run that creates its session writes its answer next: the
			// session and room for both messages are one allocation, and one
			// object for the collector to mark for as long as the store
			// keeps the session.
			sr := &sessionWithRoom{session: session{info: info}}
			sess = s.keepSession(&sr.session)
			sess.messages = sr.room[:0]
		default:
			sess = s.addSession(info)
			sess.messages = make([]core.SessionMessage, 0, len(prepared)+1)
		}
	} else if len(prepared) > 0 {
		sess = s.sessions[w.SessionID]
	}
	if len(prepared) > 0 {
		s.appendMessages(sess, now, prepared...)
	}
	if w.Run != nil {
		if err := s.putRun(*w.Run); err != nil {
			return false, err // checked above: it cannot fail
		}
	}
	if len(w.Crumbs) > 0 {
		s.appendCrumbs(w.Crumbs)
	}
	if creates {
		// After the record: a session with a run not finished is kept.
		s.noteSession()
	}
	return true, nil
}

// sessionWithRoom is a session created by a run's start and the array of
// its first two messages: the run's input and its answer.
type sessionWithRoom struct {
	session session
	room    [2]core.SessionMessage
}

// RunCrumbLog implements core.RunCrumbWriter: WriteRun appends a run
// write's crumbs to this store's own log, under the same hold of its lock.
func (s *Store) RunCrumbLog() core.CrumbLog { return s }
