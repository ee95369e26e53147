package bunstore

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/breadai/bread/core"
)

// crumbInsertChunk bounds the rows of one INSERT so a very large batch never
// meets SQLite's statement-length limit.
const crumbInsertChunk = 500

// AppendCrumbs implements core.CrumbLog. The batch is written whole or not
// at all. Each crumb is stored in its JSON wire form (core.EncodeCrumb).
func (s *Store) AppendCrumbs(ctx context.Context, entries []core.CrumbLogEntry) error {
	if len(entries) == 0 {
		return s.read()
	}
	rows := make([]crumbRow, len(entries))
	for i, e := range entries {
		r, err := newCrumbRow(s.errs, e)
		if err != nil {
			return err
		}
		rows[i] = r
	}
	onFK := notFound(core.ErrSessionNotFound, "a session named by the crumb log entries was not found")
	if s.features.Pipeline != nil {
		// One prepared INSERT a crumb, all in the write's one round trip.
		w := &textWrite{stmts: make([]Stmt, len(rows))}
		for i, r := range rows {
			w.stmts[i] = r.insertStmt()
		}
		return s.writeText(ctx, "append crumbs", onFK, w)
	}
	return s.write(ctx, "append crumbs", onFK, func(ctx context.Context, tx bun.Tx) error {
		return s.insertCrumbs(ctx, tx, rows)
	})
}

// insertCrumbs inserts rows in tx: one prepared INSERT each where the
// dialect prepares, else in chunks of crumbInsertChunk rows.
func (s *Store) insertCrumbs(ctx context.Context, tx bun.Tx, rows []crumbRow) error {
	if s.prepared != nil {
		for _, r := range rows {
			if _, err := s.execHot(ctx, tx, hotInsertCrumb, r.args()...); err != nil {
				return err
			}
		}
		return nil
	}
	for start := 0; start < len(rows); start += crumbInsertChunk {
		chunk := rows[start:min(start+crumbInsertChunk, len(rows))]
		if _, err := tx.NewInsert().Model(&chunk).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// args are r's values in the order of hotInsertCrumb's placeholders.
func (r *crumbRow) args() []any {
	return []any{r.RunID, r.Seq, nullString(r.SessionID), nullString(r.AgentID), r.Type, string(r.Crumb), r.CreatedAt}
}

// insertStmt is r's INSERT, prepared (prepInsertCrumb).
func (r *crumbRow) insertStmt() Stmt { return prepInsertCrumb.with(r.args()...) }

// GetCrumbs implements core.CrumbLog.
func (s *Store) GetCrumbs(ctx context.Context, runID string, afterSeq int64, limit int) ([]core.CrumbLogEntry, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	if hasNUL(runID) {
		return []core.CrumbLogEntry{}, nil
	}
	var rows []crumbRow
	q := s.db.NewSelect().Model(&rows).Where("run_id = ?", runID).Where("seq > ?", afterSeq).OrderExpr("seq ASC")
	if limit > 0 {
		q = q.Limit(int64(limit))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, s.mapErr("get crumbs", err, nil)
	}
	out := make([]core.CrumbLogEntry, len(rows))
	for i, r := range rows {
		e, err := r.entry(s.errs)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// MaxCrumbSeq implements core.CrumbLog.
func (s *Store) MaxCrumbSeq(ctx context.Context, runID string) (int64, error) {
	if err := s.read(); err != nil {
		return 0, err
	}
	if hasNUL(runID) {
		return 0, nil
	}
	var max int64
	if st := s.readStmt(ctx, readMaxCrumbSeq); st != nil {
		return max, s.mapErr("max crumb seq", st.QueryRowContext(ctx, runID).Scan(&max), nil)
	}
	err := s.db.NewSelect().Model((*crumbRow)(nil)).ColumnExpr("COALESCE(MAX(seq), 0)").Where("run_id = ?", runID).Scan(ctx, &max)
	return max, s.mapErr("max crumb seq", err, nil)
}
