package bunstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/uptrace/bun"

	"github.com/breadai/bread/core"
)

// evalRunRow is a row of bread_eval_runs.
type evalRunRow struct {
	bun.BaseModel `bun:"table:bread_eval_runs"`

	ID         string          `bun:"id,pk"`
	AgentID    string          `bun:"agent_id"`
	StartedBy  string          `bun:"started_by,nullzero"`
	CreatedAt  int64           `bun:"created_at"`
	DurationMs int64           `bun:"duration_ms"`
	Passed     int             `bun:"passed"`
	Total      int             `bun:"total"`
	Results    json.RawMessage `bun:"results"`
}

func (r evalRunRow) run() core.EvalRun {
	return core.EvalRun{ID: r.ID, AgentID: r.AgentID, StartedBy: r.StartedBy, CreatedAt: r.CreatedAt,
		DurationMs: r.DurationMs, Passed: r.Passed, Total: r.Total}
}

// SaveEvalRun implements core.EvalRunStore in one INSERT: a taken id fails
// on the primary key and leaves the saved row as it was.
func (s *Store) SaveEvalRun(ctx context.Context, r core.EvalRun) error {
	if r.ID == "" || r.AgentID == "" {
		return s.validation("an eval run needs an id and an agent")
	}
	if err := s.checkText("an eval run field", r.ID, r.AgentID, r.StartedBy); err != nil {
		return err
	}
	results := r.Results
	if results == nil {
		results = []core.EvalResult{}
	}
	raw, err := s.marshalJSON("eval run results", results)
	if err != nil {
		return err
	}
	row := evalRunRow{ID: r.ID, AgentID: r.AgentID, StartedBy: r.StartedBy, CreatedAt: r.CreatedAt,
		DurationMs: r.DurationMs, Passed: r.Passed, Total: r.Total, Results: raw}
	return s.insert(ctx, "save eval run "+r.ID, &row, nil)
}

// GetEvalRun implements core.EvalRunStore.
func (s *Store) GetEvalRun(ctx context.Context, id string) (core.EvalRun, error) {
	if err := s.read(); err != nil {
		return core.EvalRun{}, err
	}
	var row evalRunRow
	err := sql.ErrNoRows
	if !hasNUL(id) {
		err = s.db.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return core.EvalRun{}, notFound(core.ErrEvalRunNotFound, "eval run %q not found", id)
	}
	if err != nil {
		return core.EvalRun{}, s.mapErr("get eval run", err, nil)
	}
	r := row.run()
	if err := json.Unmarshal(row.Results, &r.Results); err != nil {
		return core.EvalRun{}, s.corrupt("bread_eval_runs.results", id, err)
	}
	if len(r.Results) == 0 {
		r.Results = nil
	}
	return r, nil
}

// ListEvalRuns implements core.EvalRunStore: newest first, the results
// column left unread.
func (s *Store) ListEvalRuns(ctx context.Context, f core.EvalRunFilter) ([]core.EvalRun, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	after := ""
	if f.After != nil {
		after = f.After.ID
	}
	if hasNUL(f.AgentID, f.StartedBy, after) {
		return []core.EvalRun{}, nil
	}
	var rows []evalRunRow
	q := s.db.NewSelect().Model(&rows).ExcludeColumn("results").OrderExpr("created_at DESC, id DESC")
	if f.AgentID != "" {
		q = q.Where("agent_id = ?", f.AgentID)
	}
	if f.StartedBy != "" {
		q = q.Where("started_by = ?", f.StartedBy)
	}
	if c := f.After; c != nil {
		q = q.Where("(created_at < ? OR (created_at = ? AND id < ?))", c.CreatedAt, c.CreatedAt, c.ID)
	}
	if f.Limit > 0 {
		q = q.Limit(int64(f.Limit))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, s.mapErr("list eval runs", err, nil)
	}
	out := make([]core.EvalRun, len(rows))
	for i, r := range rows {
		out[i] = r.run()
	}
	return out, nil
}
