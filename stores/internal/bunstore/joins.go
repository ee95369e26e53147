package bunstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"

	"github.com/uptrace/bun"

	"github.com/breadai/bread/core"
)

// joinRow is one row of bread_joins: a composition's settlement state.
// Settled holds one '0' or '1' per slot, so recording a slot and deciding
// whether it was the last is one conditional UPDATE on one row, which the
// database serialises among concurrent settlers.
type joinRow struct {
	bun.BaseModel `bun:"table:bread_joins"`

	ID        string `bun:"id,pk"`
	Slots     int    `bun:"slots"`
	Settled   string `bun:"settled"`
	CreatedAt int64  `bun:"created_at"`
	// CompletedBy is the slot whose settlement completed the join.
	CompletedBy sql.NullInt64 `bun:"completed_by"`
}

// joinOutputRow is one settled slot's output.
type joinOutputRow struct {
	bun.BaseModel `bun:"table:bread_join_outputs"`

	JoinID string          `bun:"join_id,pk"`
	Slot   int             `bun:"slot,pk"`
	Output json.RawMessage `bun:"output"`
}

// SettleJoin implements core.CheckpointStore in one transaction: create the
// join if needed, keep the slot's output, then flip the slot's flag with an
// UPDATE conditioned on the flag still being '0'. Concurrent settlers of one
// join queue on that row, so exactly one sees no '0' left.
func (s *Store) SettleJoin(ctx context.Context, joinID string, slots, slot int, output json.RawMessage) ([]json.RawMessage, bool, error) {
	if slots <= 0 || slot < 0 || slot >= slots {
		return nil, false, s.errs.validation("join slot %d is out of range for %d slots", slot, slots)
	}
	if err := s.checkText("a join id", joinID); err != nil {
		return nil, false, err
	}
	raw, err := s.rawJSON("join output", output)
	if err != nil {
		return nil, false, err
	}
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	var outs []json.RawMessage
	complete := false
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		row := joinRow{ID: joinID, Slots: slots, Settled: strings.Repeat("0", slots), CreatedAt: core.NowMillis()}
		if _, err := onConflictNothing(tx, tx.NewInsert().Model(&row), "id").Exec(ctx); err != nil {
			return err
		}
		out := joinOutputRow{JoinID: joinID, Slot: slot, Output: raw}
		if _, err := onConflictNothing(tx, tx.NewInsert().Model(&out), "join_id, slot").Exec(ctx); err != nil {
			return err
		}
		settled, err := s.settleSlot(ctx, tx, joinID, slots, slot)
		if err != nil {
			return err
		}
		switch {
		case len(settled) == 0:
			// Settled before: complete again only for the completer's retry.
			var j joinRow
			if err := tx.NewSelect().Model(&j).Where("id = ?", joinID).Scan(ctx); err != nil {
				return ignoreNoRows(err)
			}
			if !j.CompletedBy.Valid || j.CompletedBy.Int64 != int64(slot) {
				return nil
			}
		case strings.Contains(settled[0], "0"):
			return nil
		default:
			if _, err := tx.NewUpdate().Model((*joinRow)(nil)).Set("completed_by = ?", slot).Where("id = ?", joinID).Exec(ctx); err != nil {
				return err
			}
		}
		complete = true
		var rows []joinOutputRow
		if err := tx.NewSelect().Model(&rows).Where("join_id = ?", joinID).OrderExpr("slot ASC").Scan(ctx); err != nil {
			return err
		}
		outs = make([]json.RawMessage, slots)
		for _, r := range rows {
			if r.Slot >= 0 && r.Slot < slots {
				outs[r.Slot] = r.Output
			}
		}
		return nil
	})
	if err != nil {
		return nil, false, s.mapErr("settle join", err, nil)
	}
	return outs, complete, nil
}

// settleSlot flips slot's flag of join joinID from '0' to '1' and returns
// the flags after it, or none when the flag was not '0' (or the join has
// another number of slots). Without RETURNING the updated row is read back
// in tx, which holds its lock.
func (s *Store) settleSlot(ctx context.Context, tx bun.Tx, joinID string, slots, slot int) ([]string, error) {
	q := tx.NewUpdate().Model((*joinRow)(nil)).
		Set("settled = substr(settled, 1, ?) || '1' || substr(settled, ?)", slot, slot+2).
		Where("id = ?", joinID).
		Where("slots = ?", slots).
		Where("substr(settled, ?, 1) = '0'", slot+1)
	var settled []string
	if hasReturning(tx) {
		return settled, ignoreNoRows(q.Returning("settled").Scan(ctx, &settled))
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return nil, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return nil, err
	}
	err = tx.NewSelect().Model((*joinRow)(nil)).Column("settled").Where("id = ?", joinID).Scan(ctx, &settled)
	return settled, err
}

// ignoreNoRows treats "no row matched" as success: the slot was already
// settled.
func ignoreNoRows(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	return err
}
