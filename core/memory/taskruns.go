package memory

import (
	"cmp"
	"context"
	"slices"

	"github.com/breadai/bread/core"
)

// storedTaskRun is a task run. rec is replaced, never changed, by
// FinishTaskRun.
type storedTaskRun struct {
	rec core.TaskRunRecord
	seq uint64
}

// CreateTaskRun implements core.TaskRunStore. An empty or taken id is a
// VALIDATION_ERROR.
func (s *Store) CreateTaskRun(ctx context.Context, r core.TaskRunRecord) error {
	if r.ID == "" {
		return invalid("a task run needs an id")
	}
	rec := cloneTaskRun(r)
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.taskRuns[r.ID]; ok {
		return invalid("task run %q already exists", r.ID)
	}
	s.taskRuns[r.ID] = &storedTaskRun{rec: rec, seq: s.next()}
	return nil
}

// FinishTaskRun implements core.TaskRunStore.
func (s *Store) FinishTaskRun(ctx context.Context, id string, u core.TaskRunUpdate) error {
	output, usage := slices.Clone(u.Output), clonePtr(u.Usage)
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	tr, ok := s.taskRuns[id]
	if !ok {
		return notFound(core.ErrTaskRunNotFound, "task run %q not found", id)
	}
	rec := tr.rec // shares Input, which is never changed
	if u.Status != "" {
		rec.Status = u.Status
	}
	if u.Output != nil {
		rec.Output = output
	}
	if u.Usage != nil {
		rec.Usage = usage
	}
	if u.Error != "" {
		rec.Error = u.Error
	}
	if u.DurationMs != 0 {
		rec.DurationMs = u.DurationMs
	}
	if u.CompletedAt != 0 {
		rec.CompletedAt = u.CompletedAt
	}
	s.taskRuns[id] = &storedTaskRun{rec: rec, seq: tr.seq}
	return nil
}

// GetTaskRun implements core.TaskRunStore.
func (s *Store) GetTaskRun(ctx context.Context, id string) (core.TaskRunRecord, error) {
	if err := s.rlock(ctx); err != nil {
		return core.TaskRunRecord{}, err
	}
	tr, ok := s.taskRuns[id]
	s.mu.RUnlock()
	if !ok {
		return core.TaskRunRecord{}, notFound(core.ErrTaskRunNotFound, "task run %q not found", id)
	}
	return cloneTaskRun(tr.rec), nil
}

// ListTaskRuns implements core.TaskRunStore: newest CreatedAt first.
func (s *Store) ListTaskRuns(ctx context.Context, f core.TaskRunFilter) ([]core.TaskRunRecord, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	var hits []*storedTaskRun
	for _, tr := range s.taskRuns {
		r := &tr.rec
		if (f.TaskID == "" || r.TaskID == f.TaskID) &&
			(f.AgentID == "" || r.AgentID == f.AgentID) &&
			(f.SessionID == "" || r.SessionID == f.SessionID) &&
			(f.Status == "" || r.Status == f.Status) &&
			(f.Owner == "" || s.ownedBy(r.SessionID, f.Owner)) {
			hits = append(hits, tr)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(hits, func(a, b *storedTaskRun) int {
		return cmp.Or(cmp.Compare(b.rec.CreatedAt, a.rec.CreatedAt), cmp.Compare(b.seq, a.seq))
	})
	if f.Limit > 0 && len(hits) > f.Limit {
		hits = hits[:f.Limit]
	}
	out := make([]core.TaskRunRecord, len(hits))
	for i, tr := range hits {
		out[i] = cloneTaskRun(tr.rec)
	}
	return out, nil
}

func cloneTaskRun(r core.TaskRunRecord) core.TaskRunRecord {
	r.Input = slices.Clone(r.Input)
	r.Output = slices.Clone(r.Output)
	r.Usage = clonePtr(r.Usage)
	return r
}
