package memory

import (
	"slices"
	"time"

	"github.com/breadai/bread/core"
)

// DefaultRetainRuns is how many finished runs a Store keeps unless
// Options.RetainRuns says otherwise.
const DefaultRetainRuns = 10000

// Options configures a Store.
type Options struct {
	// RetainRuns bounds the finished runs (completed, failed, cancelled or
	// lost) whose run record and crumb log the store keeps: once there are
	// more, the oldest to finish are dropped, so a long-lived process does
	// not grow with every run it ever served. Sessions, their messages and
	// suspended or running runs are never dropped by it. 0 means
	// DefaultRetainRuns; a negative value keeps every run.
	RetainRuns int
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
// beyond the retention. The write lock must be held.
func (s *Store) noteFinished(id string) {
	if s.retain < 0 {
		return
	}
	if _, ok := s.finishedSet[id]; ok {
		return
	}
	s.finishedSet[id] = struct{}{}
	s.finishedOrder = append(s.finishedOrder, id)
	for len(s.finishedOrder) > s.retain {
		old := s.finishedOrder[0]
		s.finishedOrder[0] = ""
		s.finishedOrder = s.finishedOrder[1:]
		delete(s.finishedSet, old)
		s.dropRun(old)
	}
}

// noteRunning takes a run that runs again (a resume retried after its
// instance stopped) out of the finished ones, so it is ordered by when it
// finishes next. Rare, hence the scan. The write lock must be held.
func (s *Store) noteRunning(id string) {
	if _, ok := s.finishedSet[id]; !ok {
		return
	}
	delete(s.finishedSet, id)
	s.finishedOrder = slices.DeleteFunc(s.finishedOrder, func(o string) bool { return o == id })
}

// dropRun deletes a run's record and crumb log. The write lock must be held.
func (s *Store) dropRun(id string) {
	delete(s.runRecords, id)
	if r := s.runs[id]; r != nil {
		if runs := s.sessionRuns[r.indexed]; runs != nil {
			delete(runs, id)
			if len(runs) == 0 {
				delete(s.sessionRuns, r.indexed)
			}
		}
		delete(s.runs, id)
	}
}
