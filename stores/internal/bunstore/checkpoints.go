package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/breadai/bread/core"
)

// SaveCheckpoint implements core.CheckpointStore: an upsert on id. A
// checkpoint naming a session that does not exist is ErrSessionNotFound.
func (s *Store) SaveCheckpoint(ctx context.Context, cp core.CheckpointRecord) error {
	row, err := newCheckpointRow(s.errs, cp)
	if err != nil {
		return err
	}
	if _, fenced := core.RunFenceFrom(ctx); fenced {
		// A run's own save: through the committer, whose write checks the
		// fence in the upsert's transaction.
		return s.write(ctx, "save checkpoint", sessionFK(cp.SessionID), func(ctx context.Context, tx bun.Tx) error {
			_, err := upsertCheckpoint(tx, &row).Exec(ctx)
			return err
		})
	}
	unlock, lerr := s.lockWrites(ctx)
	if lerr != nil {
		return lerr
	}
	defer unlock()
	_, err = upsertCheckpoint(s.db, &row).Exec(ctx)
	return s.mapErr("save checkpoint", err, sessionFK(cp.SessionID))
}

func upsertCheckpoint(db bun.IDB, row *checkpointRow) *bun.InsertQuery {
	return onConflictUpdate(db, db.NewInsert().Model(row), "id",
		"agent_id", "run_id", "session_id", "tool_name", "tool_call_id", "schema", "prompt", "kind", "skill",
		"parent", "pending", "created_at", "meta", "human_set", "claimed_by", "claimed_until")
}

// GetCheckpoint implements core.CheckpointStore.
func (s *Store) GetCheckpoint(ctx context.Context, id string) (core.CheckpointRecord, error) {
	if err := s.read(); err != nil {
		return core.CheckpointRecord{}, err
	}
	var row checkpointRow
	err := sql.ErrNoRows
	if !hasNUL(id) {
		err = s.db.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return core.CheckpointRecord{}, notFound(core.ErrCheckpointNotFound, "checkpoint %q not found", id)
	}
	if err != nil {
		return core.CheckpointRecord{}, s.mapErr("get checkpoint", err, nil)
	}
	return row.checkpoint(s.errs)
}

// DeleteCheckpoint implements core.CheckpointStore with one DELETE …
// RETURNING: the row goes to whichever statement deletes it, so of racing
// claims exactly one gets the record. Without RETURNING (MySQL) it is a
// locking read and the DELETE in one transaction: a racing delete waits
// for the row's lock and then finds no row.
func (s *Store) DeleteCheckpoint(ctx context.Context, id string) (core.CheckpointRecord, error) {
	unlock, lerr := s.lockWrites(ctx)
	if lerr != nil {
		return core.CheckpointRecord{}, lerr
	}
	defer unlock()
	if hasNUL(id) {
		return core.CheckpointRecord{}, notFound(core.ErrCheckpointNotFound, "checkpoint %q not found", id)
	}
	var rows []checkpointRow
	var err error
	if hasReturning(s.db) {
		err = s.db.NewDelete().Model(&rows).Where("id = ?", id).Returning("*").Scan(ctx)
	} else {
		err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if err := tx.NewSelect().Model(&rows).Where("id = ?", id).For("UPDATE").Scan(ctx); err != nil || len(rows) == 0 {
				return err
			}
			_, err := tx.NewDelete().Model((*checkpointRow)(nil)).Where("id = ?", id).Exec(ctx)
			return err
		})
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return core.CheckpointRecord{}, s.mapErr("delete checkpoint", err, nil)
	}
	if len(rows) == 0 {
		return core.CheckpointRecord{}, notFound(core.ErrCheckpointNotFound, "checkpoint %q not found", id)
	}
	return rows[0].checkpoint(s.errs)
}

// ListCheckpoints implements core.CheckpointStore, oldest first.
func (s *Store) ListCheckpoints(ctx context.Context) ([]core.CheckpointRecord, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	var rows []checkpointRow
	if err := s.db.NewSelect().Model(&rows).OrderExpr(s.clauses.checkpoints).Scan(ctx); err != nil {
		return nil, s.mapErr("list checkpoints", err, nil)
	}
	out := make([]core.CheckpointRecord, 0, len(rows))
	for _, r := range rows {
		cp, err := r.checkpoint(s.errs)
		if err != nil {
			return nil, err
		}
		out = append(out, cp)
	}
	return out, nil
}

// SuspendRun implements core.CheckpointStore in one transaction: the
// session is touched (and found) first, then the messages and the
// checkpoints are written, or nothing is.
func (s *Store) SuspendRun(ctx context.Context, sessionID string, msgs []core.SessionMessage, cps ...core.CheckpointRecord) error {
	if hasNUL(sessionID) {
		return sessionFK(sessionID)
	}
	rows, err := s.messageRows(sessionID, msgs)
	if err != nil {
		return err
	}
	cpRows := make([]checkpointRow, len(cps))
	for i, cp := range cps {
		if cp.SessionID != sessionID {
			return s.errs.validation("checkpoint %q names session %q, not the suspending run's %q", cp.ID, cp.SessionID, sessionID)
		}
		if cpRows[i], err = newCheckpointRow(s.errs, cp); err != nil {
			return err
		}
	}
	return s.write(ctx, "suspend run", sessionFK(sessionID), func(ctx context.Context, tx bun.Tx) error {
		if sessionID != "" || len(rows) > 0 {
			if err := s.touchSession(ctx, tx, sessionID); err != nil {
				return err
			}
		}
		if len(rows) > 0 {
			if _, err := tx.NewInsert().Model(&rows).Exec(ctx); err != nil {
				return err
			}
		}
		for i := range cpRows {
			if _, err := upsertCheckpoint(tx, &cpRows[i]).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
}

// ClaimCheckpoint implements core.CheckpointStore as one conditional UPDATE,
// so the database picks the single winner of concurrent claims.
func (s *Store) ClaimCheckpoint(ctx context.Context, id, claimant string, now, until int64) (core.CheckpointRecord, error) {
	if hasNUL(id) {
		return core.CheckpointRecord{}, notFound(core.ErrCheckpointNotFound, "checkpoint %q not found", id)
	}
	if err := s.checkText("a checkpoint claimant", claimant); err != nil {
		return core.CheckpointRecord{}, err
	}
	unlock, lerr := s.lockWrites(ctx)
	if lerr != nil {
		return core.CheckpointRecord{}, lerr
	}
	defer unlock()
	rows, err := claimCheckpoint(ctx, s.db, id, claimant, now, until)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return core.CheckpointRecord{}, s.mapErr("claim checkpoint", err, nil)
	}
	if len(rows) == 1 {
		return rows[0].checkpoint(s.errs)
	}
	exists, err := s.db.NewSelect().Model((*checkpointRow)(nil)).Where("id = ?", id).Exists(ctx)
	if err != nil {
		return core.CheckpointRecord{}, s.mapErr("claim checkpoint", err, nil)
	}
	if !exists {
		return core.CheckpointRecord{}, notFound(core.ErrCheckpointNotFound, "checkpoint %q not found", id)
	}
	return core.CheckpointRecord{}, &core.BreadError{Code: core.CodeCheckpointClaimed, Message: fmt.Sprintf("checkpoint %q is being resumed; retry once that resume ends or its claim lapses", id)}
}

// claimCheckpoint sets the claim on checkpoint id unless another holds it
// past now, and returns the claimed row, or none. Without RETURNING the
// row is read back in the transaction of the UPDATE, which holds its lock.
func claimCheckpoint(ctx context.Context, db *bun.DB, id, claimant string, now, until int64) ([]checkpointRow, error) {
	var rows []checkpointRow
	claim := func(db bun.IDB) *bun.UpdateQuery {
		return db.NewUpdate().Model((*checkpointRow)(nil)).
			Set("claimed_by = ?", claimant).
			Set("claimed_until = ?", until).
			Where("id = ?", id).
			Where("(claimed_by IS NULL OR claimed_until IS NULL OR claimed_until < ?)", now)
	}
	if hasReturning(db) {
		err := claim(db).Returning("*").Scan(ctx, &rows)
		return rows, err
	}
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := claim(tx).Exec(ctx)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		return tx.NewSelect().Model(&rows).Where("id = ?", id).Scan(ctx)
	})
	return rows, err
}

// RenewCheckpointClaims implements core.CheckpointStore in one UPDATE,
// which skips a row another transaction is writing (see renewUnlocked).
func (s *Store) RenewCheckpointClaims(ctx context.Context, claimant string, until int64) (int, error) {
	if hasNUL(claimant) {
		return 0, nil
	}
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return 0, err
	}
	defer unlock()
	n, err := s.renewUnlocked(ctx, func(db bun.IDB) *bun.UpdateQuery {
		return db.NewUpdate().Model((*checkpointRow)(nil)).Set("claimed_until = ?", until)
	}, "bread_checkpoints", "claimed_by = ?", claimant)
	if err != nil {
		return 0, s.mapErr("renew checkpoint claims", err, nil)
	}
	return n, nil
}
