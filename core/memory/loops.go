package memory

import (
	"cmp"
	"context"
	"slices"

	"github.com/breadai/bread/core"
)

// storedLoop is a loop. rec is replaced, never changed, by UpdateLoop;
// iterations only grows and its elements are never changed.
type storedLoop struct {
	rec        core.LoopRecord
	seq        uint64
	iterations []core.LoopIteration
}

// CreateLoop implements core.LoopStore. An empty or taken id is a
// VALIDATION_ERROR.
func (s *Store) CreateLoop(ctx context.Context, l core.LoopRecord) error {
	if l.ID == "" {
		return invalid("a loop needs an id")
	}
	rec := cloneLoop(l)
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.loops[l.ID]; ok {
		return invalid("loop %q already exists", l.ID)
	}
	s.loops[l.ID] = &storedLoop{rec: rec, seq: s.next()}
	return nil
}

// UpdateLoop implements core.LoopStore.
func (s *Store) UpdateLoop(ctx context.Context, id string, u core.LoopUpdate) error {
	result := slices.Clone(u.Result)
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	l, ok := s.loops[id]
	if !ok {
		return notFound(core.ErrLoopNotFound, "loop %q not found", id)
	}
	rec := l.rec // shares Pool and Pipeline, which are never changed
	if u.Status != "" {
		rec.Status = u.Status
	}
	if u.Iterations != 0 {
		rec.Iterations = u.Iterations
	}
	if u.Result != nil {
		rec.Result = result
	}
	if u.CompletedAt != 0 {
		rec.CompletedAt = u.CompletedAt
	}
	l.rec = rec
	return nil
}

// AddLoopIteration implements core.LoopStore. An iteration without an id
// gets one; a missing loop is ErrLoopNotFound.
func (s *Store) AddLoopIteration(ctx context.Context, it core.LoopIteration) error {
	if it.ID == "" {
		it.ID = s.newID()
	}
	it.Input, it.Output = slices.Clone(it.Input), slices.Clone(it.Output)
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	l, ok := s.loops[it.LoopID]
	if !ok {
		return notFound(core.ErrLoopNotFound, "loop %q not found", it.LoopID)
	}
	l.iterations = append(l.iterations, it)
	return nil
}

// GetLoop implements core.LoopStore. Iterations come in Index order, ties
// in the order they were added.
func (s *Store) GetLoop(ctx context.Context, id string) (core.LoopDetail, error) {
	if err := s.rlock(ctx); err != nil {
		return core.LoopDetail{}, err
	}
	l, ok := s.loops[id]
	var (
		rec core.LoopRecord
		its []core.LoopIteration
	)
	if ok {
		rec, its = l.rec, l.iterations
	}
	s.mu.RUnlock()
	if !ok {
		return core.LoopDetail{}, notFound(core.ErrLoopNotFound, "loop %q not found", id)
	}
	out := core.LoopDetail{Loop: cloneLoop(rec), Iterations: make([]core.LoopIteration, len(its))}
	for i, it := range its {
		it.Input, it.Output = slices.Clone(it.Input), slices.Clone(it.Output)
		out.Iterations[i] = it
	}
	slices.SortStableFunc(out.Iterations, func(a, b core.LoopIteration) int { return cmp.Compare(a.Index, b.Index) })
	return out, nil
}

// ListLoops implements core.LoopStore: oldest StartedAt first.
func (s *Store) ListLoops(ctx context.Context, f core.LoopFilter) ([]core.LoopRecord, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	type found struct {
		rec core.LoopRecord
		seq uint64
	}
	var hits []found
	for _, l := range s.loops {
		r := &l.rec
		if (f.SessionID == "" || r.SessionID == f.SessionID) &&
			(f.AgentID == "" || r.AgentID == f.AgentID) &&
			(f.Status == "" || r.Status == f.Status) &&
			(f.Owner == "" || s.ownedBy(r.SessionID, f.Owner)) {
			hits = append(hits, found{l.rec, l.seq})
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(hits, func(a, b found) int {
		return cmp.Or(cmp.Compare(a.rec.StartedAt, b.rec.StartedAt), cmp.Compare(a.seq, b.seq))
	})
	out := make([]core.LoopRecord, len(hits))
	for i, h := range hits {
		out[i] = cloneLoop(h.rec)
	}
	return out, nil
}

func cloneLoop(l core.LoopRecord) core.LoopRecord {
	l.Pool = slices.Clone(l.Pool)
	l.Pipeline = slices.Clone(l.Pipeline)
	l.Result = slices.Clone(l.Result)
	return l
}
