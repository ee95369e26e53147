package bunstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/uptrace/bun"

	"github.com/breadai/bread/core"
)

// CreateTaskRun implements core.TaskRunStore.
func (s *Store) CreateTaskRun(ctx context.Context, r core.TaskRunRecord) error {
	row, err := newTaskRunRow(s.errs, r)
	if err != nil {
		return err
	}
	return s.insert(ctx, "create task run "+r.ID, &row, nil)
}

// FinishTaskRun implements core.TaskRunStore in one UPDATE of the non-zero
// fields.
func (s *Store) FinishTaskRun(ctx context.Context, id string, u core.TaskRunUpdate) error {
	if hasNUL(id) {
		return notFound(core.ErrTaskRunNotFound, "task run %q not found", id)
	}
	if err := s.checkText("a task run field", string(u.Status), u.Error); err != nil {
		return err
	}
	output, err := s.rawJSON("task run output", u.Output)
	if err != nil {
		return err
	}
	var usage []byte
	if u.Usage != nil {
		if usage, err = s.marshalJSON("task run usage", u.Usage); err != nil {
			return err
		}
	}
	unlock, lerr := s.lockWrites(ctx)
	if lerr != nil {
		return lerr
	}
	defer unlock()
	q := s.db.NewUpdate().Model((*taskRunRow)(nil)).Where("id = ?", id)
	set := false
	if u.Status != "" {
		q, set = q.Set("status = ?", string(u.Status)), true
	}
	if output != nil {
		q, set = q.Set("output = ?", output), true
	}
	if usage != nil {
		q, set = q.Set("? = ?", bun.Ident("usage"), string(usage)), true
	}
	if u.Error != "" {
		q, set = q.Set("error = ?", u.Error), true
	}
	if u.DurationMs != 0 {
		q, set = q.Set("duration_ms = ?", u.DurationMs), true
	}
	if u.CompletedAt != 0 {
		q, set = q.Set("completed_at = ?", u.CompletedAt), true
	}
	if !set {
		q = q.Set("id = id")
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return s.mapErr("finish task run", err, nil)
	}
	if n, err := res.RowsAffected(); err != nil {
		return s.mapErr("finish task run", err, nil)
	} else if n == 0 {
		return notFound(core.ErrTaskRunNotFound, "task run %q not found", id)
	}
	return nil
}

// GetTaskRun implements core.TaskRunStore.
func (s *Store) GetTaskRun(ctx context.Context, id string) (core.TaskRunRecord, error) {
	if err := s.read(); err != nil {
		return core.TaskRunRecord{}, err
	}
	var row taskRunRow
	err := sql.ErrNoRows
	if !hasNUL(id) {
		err = s.db.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return core.TaskRunRecord{}, notFound(core.ErrTaskRunNotFound, "task run %q not found", id)
	}
	if err != nil {
		return core.TaskRunRecord{}, s.mapErr("get task run", err, nil)
	}
	return row.taskRun(s.errs)
}

// ListTaskRuns implements core.TaskRunStore, newest first.
func (s *Store) ListTaskRuns(ctx context.Context, f core.TaskRunFilter) ([]core.TaskRunRecord, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	if hasNUL(f.TaskID, f.AgentID, f.SessionID, string(f.Status), f.Owner) {
		return []core.TaskRunRecord{}, nil
	}
	var rows []taskRunRow
	q := s.db.NewSelect().Model(&rows).OrderExpr(s.clauses.taskRuns)
	if f.TaskID != "" {
		q = q.Where("task_id = ?", f.TaskID)
	}
	if f.AgentID != "" {
		q = q.Where("agent_id = ?", f.AgentID)
	}
	if f.SessionID != "" {
		q = q.Where("session_id = ?", f.SessionID)
	}
	if f.Status != "" {
		q = q.Where("status = ?", string(f.Status))
	}
	if f.Owner != "" {
		q = q.Where("session_id IN (SELECT id FROM bread_sessions WHERE owner = ?)", f.Owner)
	}
	if f.Limit > 0 {
		q = q.Limit(int64(f.Limit))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, s.mapErr("list task runs", err, nil)
	}
	out := make([]core.TaskRunRecord, 0, len(rows))
	for _, r := range rows {
		t, err := r.taskRun(s.errs)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}
