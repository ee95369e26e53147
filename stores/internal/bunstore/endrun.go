package bunstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/uptrace/bun"

	"github.com/breadai/bread/core"
)

// EndRun implements core.RunStore in one transaction: an UPDATE guarded by
// the condition (not lost, not running under another owner), so the
// database orders it against a concurrent LoseRun; when it changes no row,
// a read tells a missing record (inserted) from a taken one, or from a
// MySQL row the UPDATE left as it was (MySQL counts changed rows, not
// matched ones).
func (s *Store) EndRun(ctx context.Context, r core.RunRecord, owner string) (bool, error) {
	if err := s.checkText("a run field", r.ID, r.AgentID, r.SessionID, r.PipelineID, r.StartedBy, string(r.Status), r.Owner, r.CheckpointID, r.ErrorCode, r.Fence, owner); err != nil {
		return false, err
	}
	row := runRow{
		ID: r.ID, AgentID: r.AgentID, SessionID: r.SessionID, PipelineID: r.PipelineID, StartedBy: r.StartedBy,
		Status: string(r.Status), Owner: r.Owner, LeaseUntil: r.LeaseUntil,
		CheckpointID: r.CheckpointID, Attempt: r.Attempt, ErrorCode: r.ErrorCode, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Fence: r.Fence,
	}
	var wrote bool
	err := s.write(ctx, "end run", sessionFK(r.SessionID), func(ctx context.Context, tx bun.Tx) error {
		wrote = false
		res, err := tx.NewUpdate().Model((*runRow)(nil)).
			Set("status = ?", row.Status).
			Set("owner = ?", nullString(row.Owner)).
			Set("lease_until = ?", nullInt(row.LeaseUntil)).
			Set("checkpoint_id = ?", nullString(row.CheckpointID)).
			Set("attempt = ?", nullInt(int64(row.Attempt))).
			Set("error_code = ?", nullString(row.ErrorCode)).
			Set("updated_at = ?", row.UpdatedAt).
			Set("fence = ?", nullString(row.Fence)).
			Where("id = ?", row.ID).
			Where("status <> ?", string(core.RunLost)).
			Where("NOT (status = ? AND COALESCE(owner, '') <> '' AND owner <> ?)", string(core.RunRunning), owner).
			Exec(ctx)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n > 0 {
			wrote = true
			return nil
		}
		var cur runRow
		err = tx.NewSelect().Model(&cur).Column("status", "owner").Where("id = ?", row.ID).Scan(ctx)
		if errors.Is(err, sql.ErrNoRows) {
			wrote = true
			_, err = onConflictUpdate(tx, tx.NewInsert().Model(&row), "id",
				"status", "owner", "lease_until", "checkpoint_id", "attempt", "error_code", "updated_at", "fence").Exec(ctx)
			return err
		}
		if err != nil {
			return err
		}
		wrote = !runTaken(cur.Status, cur.Owner, owner)
		return nil
	})
	if err != nil {
		return false, err
	}
	return wrote, nil
}

// runTaken is EndRun's condition: the record was declared lost, or another
// owner runs it.
func runTaken(status, cur, owner string) bool {
	return status == string(core.RunLost) || (status == string(core.RunRunning) && cur != "" && cur != owner)
}
