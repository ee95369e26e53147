package bunstore

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/uptrace/bun"

	"github.com/breadai/bread/core"
)

var _ core.RunSubscriptionStore = (*Store)(nil)

// runSubscriptionRow is a row of bread_run_subscriptions.
type runSubscriptionRow struct {
	bun.BaseModel `bun:"table:bread_run_subscriptions"`

	RunID     string `bun:"run_id,pk"`
	ID        string `bun:"id,pk"`
	SessionID string `bun:"session_id"`
	Config    string `bun:"config"`
	CreatedAt int64  `bun:"created_at"`
}

// PutRunSubscription implements core.RunSubscriptionStore in one
// transaction: the row of (run, id) gets the new config, or, when there is
// none, a row is inserted (after the run's others); a missing session is
// the foreign key's ErrSessionNotFound.
func (s *Store) PutRunSubscription(ctx context.Context, sub core.RunSubscription) error {
	if sub.RunID == "" || sub.ID == "" {
		return s.validation("a run subscription needs a run and an id")
	}
	doc := bytes.TrimSpace(sub.Config)
	if !json.Valid(doc) {
		return s.validation("the config of run subscription %q is not JSON", sub.ID)
	}
	if err := s.checkText("a run subscription", sub.RunID, sub.ID, sub.SessionID, string(doc)); err != nil {
		return err
	}
	if hasNUL(sub.SessionID) {
		return sessionFK(sub.SessionID)
	}
	return s.write(ctx, "put run subscription", sessionFK(sub.SessionID), func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*runSubscriptionRow)(nil)).Set("config = ?", string(doc)).
			Where("run_id = ?", sub.RunID).Where("id = ?", sub.ID).Exec(ctx)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err == nil && n > 0 {
			return nil
		}
		_, err = tx.NewInsert().Model(&runSubscriptionRow{RunID: sub.RunID, ID: sub.ID, SessionID: sub.SessionID, Config: string(doc), CreatedAt: core.NowMillis()}).Exec(ctx)
		return err
	})
}

// ListRunSubscriptions implements core.RunSubscriptionStore, in insertion
// order.
func (s *Store) ListRunSubscriptions(ctx context.Context, runID string) ([]core.RunSubscription, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	out := []core.RunSubscription{}
	if hasNUL(runID) {
		return out, nil
	}
	var rows []runSubscriptionRow
	if err := s.db.NewSelect().Model(&rows).Where("run_id = ?", runID).OrderExpr(s.clauses.subs).Scan(ctx); err != nil {
		return nil, s.mapErr("list run subscriptions", err, nil)
	}
	for _, r := range rows {
		out = append(out, core.RunSubscription{RunID: r.RunID, ID: r.ID, SessionID: r.SessionID, Config: json.RawMessage(r.Config), CreatedAt: r.CreatedAt})
	}
	return out, nil
}

// DeleteRunSubscription implements core.RunSubscriptionStore.
func (s *Store) DeleteRunSubscription(ctx context.Context, runID, id string) (bool, error) {
	if hasNUL(runID, id) {
		return false, s.read()
	}
	var n int64
	err := s.write(ctx, "delete run subscription", nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewDelete().Model((*runSubscriptionRow)(nil)).Where("run_id = ?", runID).Where("id = ?", id).Exec(ctx)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n > 0, err
}

// DeleteRunSubscriptions implements core.RunSubscriptionStore.
func (s *Store) DeleteRunSubscriptions(ctx context.Context, runID string) (int, error) {
	if hasNUL(runID) {
		return 0, s.read()
	}
	var n int64
	err := s.write(ctx, "delete run subscriptions", nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewDelete().Model((*runSubscriptionRow)(nil)).Where("run_id = ?", runID).Exec(ctx)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}
