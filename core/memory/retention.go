package memory

import (
	"slices"
	"time"

	"github.com/breadai/bread/core"
)

// DefaultRetainRuns is how many finished runs a Store keeps unless
// Options.RetainRuns says otherwise.
const DefaultRetainRuns = 10000

// DefaultRetainSessions is how many sessions a Store keeps unless
// Options.RetainSessions says otherwise.
const DefaultRetainSessions = 10000

// Options configures a Store.
type Options struct {
	// RetainRuns bounds the finished runs (completed, failed, cancelled or
	// lost) whose run record and crumb log the store keeps: once there are
	// more, the oldest to finish are dropped, so a long-lived process does
	// not grow with every run it ever served. Sessions, their messages and
	// suspended or running runs are never dropped by it. 0 means
	// DefaultRetainRuns; a negative value keeps every run.
	RetainRuns int
	// RetainSessions bounds the sessions the store keeps, with their
	// messages, checkpoints, run records and crumb logs: once there are a
	// sixteenth more than it, the least recently updated are dropped down
	// to it, as CleanupSessions would drop them, so a process that makes a
	// session per run (bread dev) does not grow with every run it served.
	// A session with a checkpoint or a run that has not finished is never
	// dropped by it. 0 means DefaultRetainSessions; a negative value keeps
	// every session.
	RetainSessions int
	// Now is the store's clock: the times it stamps on sessions and the
	// cutoff of CleanupSessions. nil is time.Now. A test moves it instead
	// of waiting for sessions to age.
	Now func() time.Time
}

// finished reports whether a run in status st has ended for good.
func finished(st core.RunStatus) bool {
	switch st {
	case core.RunCompleted, core.RunFailed, core.RunCancelled, core.RunLost:
		return true
	}
	return false
}

// noteFinished records that run id ended and drops the oldest finished runs
// beyond the retention; was says its record had ended already, so it is
// in the order. (The record's status says so: no set of the finished runs
// is kept beside the order, whose lookups, inserts and deletes on cold
// entries cost a short run 2% of the server's CPU.) The write lock must be
// held.
func (s *Store) noteFinished(id string, was bool) {
	if s.retain < 0 || was {
		return
	}
	s.finishedOrder = append(s.finishedOrder, id)
	for len(s.finishedOrder) > s.retain {
		old := s.finishedOrder[0]
		s.finishedOrder[0] = ""
		s.finishedOrder = s.finishedOrder[1:]
		s.dropRun(old)
	}
}

// noteRunning takes a run that runs again (a resume retried after its
// instance stopped) out of the finished ones, so it is ordered by when it
// finishes next; was says its record had ended, so it is in the order.
// Rare, hence the scan. The write lock must be held.
func (s *Store) noteRunning(id string, was bool) {
	if s.retain < 0 || !was {
		return
	}
	s.finishedOrder = slices.DeleteFunc(s.finishedOrder, func(o string) bool { return o == id })
}

// dropRun deletes a run's record and crumb log. The write lock must be held.
func (s *Store) dropRun(id string) {
	if rec := s.runRecords[id]; rec != nil && rec.SessionID != "" {
		if runs, ok := s.sessionRecords[rec.SessionID]; ok {
			if runs.del(id); runs.empty() {
				delete(s.sessionRecords, rec.SessionID)
			} else {
				s.sessionRecords[rec.SessionID] = runs
			}
		}
	}
	delete(s.runRecords, id)
	if r := s.runs[id]; r != nil {
		if runs, ok := s.sessionRuns[r.indexed]; ok {
			if runs.del(id); runs.empty() {
				delete(s.sessionRuns, r.indexed)
			} else {
				s.sessionRuns[r.indexed] = runs
			}
		}
		delete(s.runs, id)
	}
}

// noteSession drops the least recently updated sessions once there are a
// sixteenth more than the retention, down to the retention, walking the
// order of updates from its oldest end: the sessions it keeps there (busy
// ones) are walked again only once per that many new sessions. The write
// lock must be held.
func (s *Store) noteSession() {
	if s.retainSessions < 0 || len(s.sessions) <= s.retainSessions+s.retainSessions/16 {
		return
	}
	// Sessions something still waits on stay: a checkpoint (a human's
	// answer, a resume) or a run not finished.
	waiting := make(map[string]struct{}, len(s.checkpoints))
	for _, cp := range s.checkpoints {
		waiting[cp.rec.SessionID] = struct{}{}
	}
	for sess := s.order.oldest; sess != nil && len(s.sessions) > s.retainSessions; {
		next := sess.newer
		if _, ok := waiting[sess.info.ID]; !ok && !s.runsUnfinished(sess.info.ID) {
			s.dropSession(sess.info.ID)
		}
		sess = next
	}
}

// runsUnfinished reports whether a run of the session has a record that
// has not finished. The lock must be held.
func (s *Store) runsUnfinished(sessionID string) bool {
	for _, r := range s.sessionRecords[sessionID].all {
		if !finished(r.Status) {
			return true
		}
	}
	return false
}
