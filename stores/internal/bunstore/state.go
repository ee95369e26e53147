package bunstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/uptrace/bun"

	"github.com/breadai/bread/core"
)

var _ core.SessionStateStore = (*Store)(nil)

// sessionStateRow is a row of bread_session_state.
type sessionStateRow struct {
	bun.BaseModel `bun:"table:bread_session_state"`

	SessionID string `bun:"session_id,pk"`
	State     string `bun:"state"`
}

// GetSessionState implements core.SessionStateStore: nil when the session
// has no state row; a missing session is ErrSessionNotFound.
func (s *Store) GetSessionState(ctx context.Context, sessionID string) (json.RawMessage, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	if hasNUL(sessionID) {
		return nil, notFound(core.ErrSessionNotFound, "session %q not found", sessionID)
	}
	var row sessionStateRow
	err := s.db.NewSelect().Model(&row).Where("session_id = ?", sessionID).Scan(ctx)
	if err == nil {
		return json.RawMessage(row.State), nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, s.mapErr("get session state", err, nil)
	}
	// No row: a session without state, or no session.
	if _, err := s.GetSession(ctx, sessionID); err != nil {
		return nil, err
	}
	return nil, nil
}

// PutSessionState implements core.SessionStateStore in one transaction:
// the session is touched (which finds it), its state row replaced, or
// removed for a nil or null state.
func (s *Store) PutSessionState(ctx context.Context, sessionID string, state json.RawMessage) error {
	if hasNUL(sessionID) {
		return notFound(core.ErrSessionNotFound, "session %q not found", sessionID)
	}
	doc := bytes.TrimSpace(state)
	clear := len(doc) == 0 || string(doc) == "null"
	if !clear && !json.Valid(doc) {
		return s.validation("the state of a session is not JSON")
	}
	if err := s.checkText("a session state", string(doc)); err != nil {
		return err
	}
	return s.write(ctx, "put session state", nil, func(ctx context.Context, tx bun.Tx) error {
		if err := s.touchSession(ctx, tx, sessionID); err != nil {
			return err
		}
		if _, err := tx.NewDelete().Model((*sessionStateRow)(nil)).Where("session_id = ?", sessionID).Exec(ctx); err != nil {
			return err
		}
		if clear {
			return nil
		}
		_, err := tx.NewInsert().Model(&sessionStateRow{SessionID: sessionID, State: string(doc)}).Exec(ctx)
		return err
	})
}
