package bunstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/uptrace/bun"

	"github.com/breadai/bread/core"
)

// runRow is one row of bread_runs.
type runRow struct {
	bun.BaseModel `bun:"table:bread_runs"`

	ID           string `bun:"id,pk"`
	AgentID      string `bun:"agent_id"`
	SessionID    string `bun:"session_id,nullzero"`
	PipelineID   string `bun:"pipeline_id,nullzero"`
	StartedBy    string `bun:"started_by,nullzero"`
	Status       string `bun:"status"`
	Owner        string `bun:"owner,nullzero"`
	LeaseUntil   int64  `bun:"lease_until,nullzero"`
	CheckpointID string `bun:"checkpoint_id,nullzero"`
	Attempt      int    `bun:"attempt,nullzero"`
	ErrorCode    string `bun:"error_code,nullzero"`
	CreatedAt    int64  `bun:"created_at"`
	UpdatedAt    int64  `bun:"updated_at"`
	// Fence is core.RunRecord.Fence (migration 0005).
	Fence string `bun:"fence,nullzero"`
}

func (r runRow) record() core.RunRecord {
	return core.RunRecord{
		ID: r.ID, AgentID: r.AgentID, SessionID: r.SessionID, PipelineID: r.PipelineID, StartedBy: r.StartedBy,
		Status: core.RunStatus(r.Status), Owner: r.Owner, LeaseUntil: r.LeaseUntil,
		CheckpointID: r.CheckpointID, Attempt: r.Attempt, ErrorCode: r.ErrorCode, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Fence: r.Fence,
	}
}

// PutRun implements core.RunStore: an upsert on id that never changes the
// identity columns of an existing run.
func (s *Store) PutRun(ctx context.Context, r core.RunRecord) error {
	row, err := s.runRow(r)
	if err != nil {
		return err
	}
	if s.features.Pipeline != nil {
		tw := &textWrite{stmts: []Stmt{prepPutRun.with(row.args()...)}}
		if f, ok, err := runFence(ctx); ok && err == nil {
			foldFence(f, tw)
		}
		return s.writeText(ctx, "put run", sessionFK(r.SessionID), tw)
	}
	return s.write(ctx, "put run", sessionFK(r.SessionID), row.put(s))
}

// runRow checks r and returns its row.
func (s *Store) runRow(r core.RunRecord) (*runRow, error) {
	if err := s.checkText("a run field", r.ID, r.AgentID, r.SessionID, r.PipelineID, r.StartedBy, string(r.Status), r.Owner, r.CheckpointID, r.ErrorCode, r.Fence); err != nil {
		return nil, err
	}
	return &runRow{
		ID: r.ID, AgentID: r.AgentID, SessionID: r.SessionID, PipelineID: r.PipelineID, StartedBy: r.StartedBy,
		Status: string(r.Status), Owner: r.Owner, LeaseUntil: r.LeaseUntil,
		CheckpointID: r.CheckpointID, Attempt: r.Attempt, ErrorCode: r.ErrorCode, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Fence: r.Fence,
	}, nil
}

// upsert is the statement that inserts row or replaces its mutable fields
// (see core.RunStore.PutRun).
func (row *runRow) upsert(db bun.IDB) *bun.InsertQuery {
	return onConflictUpdate(db, db.NewInsert().Model(row), "id",
		"status", "owner", "lease_until", "checkpoint_id", "attempt", "error_code", "updated_at", "fence")
}

// args are row's values in the order of hotPutRun's placeholders, NULL
// for the columns bun writes as NULL when zero.
func (row *runRow) args() []any {
	return []any{row.ID, row.AgentID, nullString(row.SessionID), nullString(row.PipelineID),
		nullString(row.StartedBy), row.Status, nullString(row.Owner), nullInt(row.LeaseUntil), nullString(row.CheckpointID),
		nullInt(int64(row.Attempt)), nullString(row.ErrorCode), row.CreatedAt, row.UpdatedAt, nullString(row.Fence)}
}

// put is the write that upserts row.
func (row *runRow) put(s *Store) func(ctx context.Context, tx bun.Tx) error {
	return func(ctx context.Context, tx bun.Tx) error {
		if s.prepared != nil {
			_, err := s.execHot(ctx, tx, hotPutRun, row.args()...)
			return err
		}
		_, err := row.upsert(tx).Exec(ctx)
		return err
	}
}

// GetRun implements core.RunStore.
func (s *Store) GetRun(ctx context.Context, id string) (core.RunRecord, error) {
	if err := s.read(); err != nil {
		return core.RunRecord{}, err
	}
	var row runRow
	err := sql.ErrNoRows
	if !hasNUL(id) {
		err = s.db.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return core.RunRecord{}, notFound(core.ErrRunNotFound, "run %q not found", id)
	}
	if err != nil {
		return core.RunRecord{}, s.mapErr("get run", err, nil)
	}
	return row.record(), nil
}

// RenewRunLeases implements core.RunStore in one UPDATE, which skips a
// row another transaction is writing (see renewUnlocked).
func (s *Store) RenewRunLeases(ctx context.Context, owner string, until int64) (int, error) {
	if hasNUL(owner) {
		return 0, nil
	}
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return 0, err
	}
	defer unlock()
	n, err := s.renewUnlocked(ctx, func(db bun.IDB) *bun.UpdateQuery {
		return db.NewUpdate().Model((*runRow)(nil)).Set("lease_until = ?", until)
	}, "bread_runs", "status = ? AND owner = ?", string(core.RunRunning), owner)
	if err != nil {
		return 0, s.mapErr("renew run leases", err, nil)
	}
	return n, nil
}

// ExpiredRuns implements core.RunStore.
func (s *Store) ExpiredRuns(ctx context.Context, now int64, limit int) ([]core.RunRecord, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 100
	}
	var rows []runRow
	err := s.db.NewSelect().Model(&rows).
		Where("status = ?", string(core.RunRunning)).
		Where("lease_until < ?", now).
		OrderExpr("lease_until ASC, id ASC").
		Limit(int64(limit)).
		Scan(ctx)
	if err != nil {
		return nil, s.mapErr("list expired runs", err, nil)
	}
	out := make([]core.RunRecord, len(rows))
	for i, r := range rows {
		out[i] = r.record()
	}
	return out, nil
}

// LoseRun implements core.RunStore as one conditional UPDATE: the database
// decides which of concurrent sweepers wins.
func (s *Store) LoseRun(ctx context.Context, id string, now int64) (bool, error) {
	if hasNUL(id) {
		return false, nil
	}
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return false, err
	}
	defer unlock()
	res, err := s.db.NewUpdate().Model((*runRow)(nil)).
		Set("status = ?", string(core.RunLost)).
		Set("error_code = ?", core.CodeRunLost).
		Set("owner = NULL").
		Set("lease_until = NULL").
		Set("fence = NULL").
		Set("updated_at = ?", now).
		Where("id = ?", id).
		Where("status = ?", string(core.RunRunning)).
		Where("lease_until < ?", now).
		Exec(ctx)
	if err != nil {
		return false, s.mapErr("lose run", err, nil)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, s.mapErr("lose run", err, nil)
	}
	return n == 1, nil
}

// SessionStarters implements core.SessionStarters in one SELECT DISTINCT.
func (s *Store) SessionStarters(ctx context.Context, sessionID string) ([]string, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	if hasNUL(sessionID) {
		return nil, nil
	}
	var out []string
	err := s.db.NewSelect().Model((*runRow)(nil)).Distinct().Column("started_by").
		Where("session_id = ?", sessionID).
		Where("started_by IS NOT NULL").
		Where("started_by <> ''").
		Scan(ctx, &out)
	if err != nil {
		return nil, s.mapErr("list a session's run starters", err, nil)
	}
	return out, nil
}

// ListRuns implements core.RunLister.
func (s *Store) ListRuns(ctx context.Context, f core.RunFilter) ([]core.RunRecord, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	if !filterable(f) {
		return []core.RunRecord{}, nil
	}
	var rows []runRow
	q := whereRuns(s.db.NewSelect().Model(&rows), f).OrderExpr("created_at DESC, id DESC")
	if c := f.After; c != nil {
		q = q.Where("(created_at < ? OR (created_at = ? AND id < ?))", c.CreatedAt, c.CreatedAt, c.ID)
	}
	if f.Limit > 0 {
		q = q.Limit(int64(f.Limit))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, s.mapErr("list runs", err, nil)
	}
	out := make([]core.RunRecord, len(rows))
	for i, r := range rows {
		out[i] = r.record()
	}
	return out, nil
}

// CountRuns implements core.RunCounter.
func (s *Store) CountRuns(ctx context.Context, f core.RunFilter) (int, error) {
	if err := s.read(); err != nil {
		return 0, err
	}
	if !filterable(f) {
		return 0, nil
	}
	n, err := whereRuns(s.db.NewSelect().Model((*runRow)(nil)), f).Count(ctx)
	if err != nil {
		return 0, s.mapErr("count runs", err, nil)
	}
	return int(n), nil
}

// filterable reports whether f can match a record: a NUL byte, which no
// stored id holds and PostgreSQL refuses in text, matches none.
func filterable(f core.RunFilter) bool {
	after := ""
	if f.After != nil {
		after = f.After.ID
	}
	return !hasNUL(f.SessionID, f.AgentID, string(f.Status), f.StartedBy, after)
}

// whereRuns adds f's conditions but After and Limit (core.RunFilter.Matches).
func whereRuns(q *bun.SelectQuery, f core.RunFilter) *bun.SelectQuery {
	if f.SessionID != "" {
		q = q.Where("session_id = ?", f.SessionID)
	}
	if f.AgentID != "" {
		q = q.Where("agent_id = ?", f.AgentID)
	}
	if f.Status != "" {
		q = q.Where("status = ?", string(f.Status))
	}
	if len(f.Statuses) > 0 {
		q = q.Where("status IN (?)", bun.List(f.Statuses))
	}
	if f.StartedBy != "" {
		q = q.Where("started_by = ?", f.StartedBy)
	}
	if f.UpdatedSince != 0 {
		q = q.Where("updated_at >= ?", f.UpdatedSince)
	}
	if f.NoPipelines {
		q = q.Where("pipeline_id IS NULL")
	}
	return q
}
