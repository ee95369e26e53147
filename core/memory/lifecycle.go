package memory

import (
	"cmp"
	"context"
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/breadai/bread/core"
)

// PutRun implements core.RunStore.
func (s *Store) PutRun(ctx context.Context, r core.RunRecord) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.checkFence(ctx); err != nil {
		return err
	}
	return s.putRun(r)
}

// EndRun implements core.RunStore: the check and the write hold the one
// lock.
func (s *Store) EndRun(ctx context.Context, r core.RunRecord, owner string) (bool, error) {
	if err := s.lock(ctx); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	if err := s.checkFence(ctx); err != nil {
		return false, err
	}
	if cur, ok := s.runRecords[r.ID]; ok && (cur.Status == core.RunLost || (cur.Status == core.RunRunning && cur.Owner != "" && cur.Owner != owner)) {
		return false, nil
	}
	return true, s.putRun(r)
}

// putRun is PutRun with the write lock held.
func (s *Store) putRun(r core.RunRecord) error {
	if cur, ok := s.runRecords[r.ID]; ok { // identity fields, StartedBy among them, stay
		was := finished(cur.Status)
		cur.Status, cur.Owner, cur.LeaseUntil = r.Status, r.Owner, r.LeaseUntil
		cur.CheckpointID, cur.Attempt, cur.ErrorCode, cur.UpdatedAt = r.CheckpointID, r.Attempt, r.ErrorCode, r.UpdatedAt
		cur.Fence = r.Fence
		if finished(r.Status) {
			s.noteFinished(r.ID, was)
		} else {
			s.noteRunning(r.ID, was)
		}
		return nil
	}
	if r.SessionID != "" {
		if _, ok := s.sessions[r.SessionID]; !ok {
			return &core.BreadError{Code: core.CodeSessionNotFound, Message: "session " + r.SessionID + " not found"}
		}
	}
	rec := r
	s.runRecords[r.ID] = &rec
	if r.SessionID != "" {
		runs := s.sessionRecords[r.SessionID]
		runs.put(r.ID, &rec)
		s.sessionRecords[r.SessionID] = runs
	}
	if finished(r.Status) {
		s.noteFinished(r.ID, false)
	}
	return nil
}

// GetRun implements core.RunStore.
func (s *Store) GetRun(ctx context.Context, id string) (core.RunRecord, error) {
	if err := s.rlock(ctx); err != nil {
		return core.RunRecord{}, err
	}
	defer s.mu.RUnlock()
	r, ok := s.runRecords[id]
	if !ok {
		return core.RunRecord{}, &core.BreadError{Code: core.CodeRunNotFound, Message: "run " + strings.ToValidUTF8(id, "?") + " not found"}
	}
	return *r, nil
}

// RenewRunLeases implements core.RunStore.
func (s *Store) RenewRunLeases(ctx context.Context, owner string, until int64) (int, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.runRecords {
		if r.Status == core.RunRunning && r.Owner == owner {
			r.LeaseUntil = until
			n++
		}
	}
	return n, nil
}

// ExpiredRuns implements core.RunStore.
func (s *Store) ExpiredRuns(ctx context.Context, now int64, limit int) ([]core.RunRecord, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	if limit <= 0 {
		limit = 100
	}
	var out []core.RunRecord
	for _, r := range s.runRecords {
		if r.Status == core.RunRunning && r.LeaseUntil < now {
			out = append(out, *r)
		}
	}
	slices.SortFunc(out, func(a, b core.RunRecord) int {
		return cmp.Or(cmp.Compare(a.LeaseUntil, b.LeaseUntil), strings.Compare(a.ID, b.ID))
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// LoseRun implements core.RunStore.
func (s *Store) LoseRun(ctx context.Context, id string, now int64) (bool, error) {
	if err := s.lock(ctx); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	r, ok := s.runRecords[id]
	if !ok || r.Status != core.RunRunning || r.LeaseUntil >= now {
		return false, nil
	}
	r.Status, r.ErrorCode, r.Owner, r.LeaseUntil, r.UpdatedAt, r.Fence = core.RunLost, core.CodeRunLost, "", 0, now, ""
	s.noteFinished(id, false) // it was running
	return true, nil
}

// dropSessionRuns removes a deleted session's run records. Called with the
// write lock held.
func (s *Store) dropSessionRuns(sessionID string) {
	for id := range s.sessionRecords[sessionID].all {
		delete(s.runRecords, id)
	}
	delete(s.sessionRecords, sessionID)
}

// recordsOf are the run records a listing of f looks at: the session's
// alone when f names one. The lock must be held.
func (s *Store) recordsOf(f core.RunFilter) iter.Seq2[string, *core.RunRecord] {
	if f.SessionID != "" {
		return s.sessionRecords[f.SessionID].all
	}
	return maps.All(s.runRecords)
}

// SessionStarters implements core.SessionStarters.
func (s *Store) SessionStarters(ctx context.Context, sessionID string) ([]string, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	var out []string
	for _, r := range s.sessionRecords[sessionID].all {
		if r.SessionID == sessionID && r.StartedBy != "" && !slices.Contains(out, r.StartedBy) {
			out = append(out, r.StartedBy)
		}
	}
	return out, nil
}

// ListRuns implements core.RunLister.
func (s *Store) ListRuns(ctx context.Context, f core.RunFilter) ([]core.RunRecord, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	out := make([]core.RunRecord, 0)
	for _, r := range s.recordsOf(f) {
		if f.Matches(*r) && (f.After == nil || newerFirst(*r, *f.After) > 0) {
			out = append(out, *r)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b core.RunRecord) int {
		return newerFirst(a, *core.CursorOf(b))
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// newerFirst orders run records as listings do: newest first by CreatedAt,
// then by id descending. It is negative when r comes before c.
func newerFirst(r core.RunRecord, c core.RunCursor) int {
	return cmp.Or(cmp.Compare(c.CreatedAt, r.CreatedAt), cmp.Compare(c.ID, r.ID))
}

// CountRuns implements core.RunCounter.
func (s *Store) CountRuns(ctx context.Context, f core.RunFilter) (int, error) {
	if err := s.rlock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.RUnlock()
	n := 0
	for _, r := range s.recordsOf(f) {
		if f.Matches(*r) {
			n++
		}
	}
	return n, nil
}
