package bunstore

import (
	"context"

	"github.com/uptrace/bun"
)

// DeleteMessages implements core.MessageDeleter in one statement.
func (s *Store) DeleteMessages(ctx context.Context, sessionID string, ids []string) (int, error) {
	if hasNUL(sessionID) {
		return 0, nil
	}
	clean := make([]string, 0, len(ids))
	for _, id := range ids {
		if !hasNUL(id) {
			clean = append(clean, id)
		}
	}
	if len(clean) == 0 {
		return 0, nil
	}
	ids = clean
	var n int64
	err := s.write(ctx, "delete messages", nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewDelete().Model((*messageRow)(nil)).Where("session_id = ?", sessionID).Where("id IN (?)", bun.List(ids)).Exec(ctx)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}
