package bunstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/breadai/bread/core"
)

// CreateLoop implements core.LoopStore.
func (s *Store) CreateLoop(ctx context.Context, l core.LoopRecord) error {
	row, err := newLoopRow(s.errs, l)
	if err != nil {
		return err
	}
	return s.insert(ctx, "create loop "+l.ID, &row, nil)
}

// UpdateLoop implements core.LoopStore in one UPDATE of the non-zero fields.
func (s *Store) UpdateLoop(ctx context.Context, id string, u core.LoopUpdate) error {
	if hasNUL(id) {
		return notFound(core.ErrLoopNotFound, "loop %q not found", id)
	}
	if err := s.checkText("a loop status", string(u.Status)); err != nil {
		return err
	}
	result, err := s.rawJSON("loop result", u.Result)
	if err != nil {
		return err
	}
	unlock, lerr := s.lockWrites(ctx)
	if lerr != nil {
		return lerr
	}
	defer unlock()
	q := s.db.NewUpdate().Model((*loopRow)(nil)).Where("id = ?", id)
	set := false
	if u.Status != "" {
		q, set = q.Set("status = ?", string(u.Status)), true
	}
	if u.Iterations != 0 {
		q, set = q.Set("iterations = ?", u.Iterations), true
	}
	if result != nil {
		q, set = q.Set("result = ?", result), true
	}
	if u.CompletedAt != 0 {
		q, set = q.Set("completed_at = ?", u.CompletedAt), true
	}
	if !set {
		// Nothing to change, but a missing loop must still be reported.
		q = q.Set("id = id")
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return s.mapErr("update loop", err, nil)
	}
	if n, err := res.RowsAffected(); err != nil {
		return s.mapErr("update loop", err, nil)
	} else if n == 0 {
		return notFound(core.ErrLoopNotFound, "loop %q not found", id)
	}
	return nil
}

// AddLoopIteration implements core.LoopStore. An iteration of a loop that
// does not exist is ErrLoopNotFound.
func (s *Store) AddLoopIteration(ctx context.Context, it core.LoopIteration) error {
	if err := s.checkText("a loop iteration field", it.ID, it.LoopID); err != nil {
		return err
	}
	row := loopIterationRow{
		ID: it.ID, LoopID: it.LoopID, Index: it.Index,
		StartedAt: it.StartedAt, CompletedAt: it.CompletedAt,
	}
	var err error
	if row.Input, err = s.rawJSON("loop iteration input", it.Input); err != nil {
		return err
	}
	if row.Output, err = s.rawJSON("loop iteration output", it.Output); err != nil {
		return err
	}
	if row.ID == "" {
		row.ID = newID()
	}
	return s.insert(ctx, "add loop iteration", &row, notFound(core.ErrLoopNotFound, "loop %q not found", it.LoopID))
}

// GetLoop implements core.LoopStore.
func (s *Store) GetLoop(ctx context.Context, id string) (core.LoopDetail, error) {
	if err := s.read(); err != nil {
		return core.LoopDetail{}, err
	}
	var row loopRow
	err := sql.ErrNoRows
	if !hasNUL(id) {
		err = s.db.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return core.LoopDetail{}, notFound(core.ErrLoopNotFound, "loop %q not found", id)
	}
	if err != nil {
		return core.LoopDetail{}, s.mapErr("get loop", err, nil)
	}
	loop, err := row.loop(s.errs)
	if err != nil {
		return core.LoopDetail{}, err
	}
	var its []loopIterationRow
	if err := s.db.NewSelect().Model(&its).Where("loop_id = ?", id).OrderExpr(s.clauses.iterations).Scan(ctx); err != nil {
		return core.LoopDetail{}, s.mapErr("get loop iterations", err, nil)
	}
	d := core.LoopDetail{Loop: loop, Iterations: make([]core.LoopIteration, len(its))}
	for i, r := range its {
		d.Iterations[i] = r.iteration()
	}
	return d, nil
}

// ListLoops implements core.LoopStore, oldest first.
func (s *Store) ListLoops(ctx context.Context, f core.LoopFilter) ([]core.LoopRecord, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	if hasNUL(f.SessionID, f.AgentID, string(f.Status), f.Owner) {
		return []core.LoopRecord{}, nil
	}
	var rows []loopRow
	q := s.db.NewSelect().Model(&rows).OrderExpr(s.clauses.loops)
	if f.SessionID != "" {
		q = q.Where("session_id = ?", f.SessionID)
	}
	if f.AgentID != "" {
		q = q.Where("agent_id = ?", f.AgentID)
	}
	if f.Status != "" {
		q = q.Where("status = ?", string(f.Status))
	}
	if f.Owner != "" {
		q = q.Where("session_id IN (SELECT id FROM bread_sessions WHERE owner = ?)", f.Owner)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, s.mapErr("list loops", err, nil)
	}
	out := make([]core.LoopRecord, 0, len(rows))
	for _, r := range rows {
		l, err := r.loop(s.errs)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}
