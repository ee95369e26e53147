package bunstore

import (
	"context"
	"database/sql"

	"github.com/uptrace/bun"

	"github.com/breadai/bread/core"
)

// GetMessages implements core.SessionStore.
func (s *Store) GetMessages(ctx context.Context, sessionID string) ([]core.SessionMessage, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	if hasNUL(sessionID) {
		return []core.SessionMessage{}, nil
	}
	if st := s.readStmt(ctx, readMessages); st != nil {
		return s.queryMessages(ctx, st, sessionID)
	}
	var rows []messageRow
	err := s.db.NewSelect().Model(&rows).Where("session_id = ?", sessionID).OrderExpr("seq ASC").Scan(ctx)
	if err != nil {
		return nil, s.mapErr("get messages", err, nil)
	}
	out := make([]core.SessionMessage, len(rows))
	for i, r := range rows {
		out[i] = r.message()
	}
	return out, nil
}

// queryMessages is GetMessages through the prepared query st.
func (s *Store) queryMessages(ctx context.Context, st *sql.Stmt, sessionID string) ([]core.SessionMessage, error) {
	rows, err := st.QueryContext(ctx, sessionID)
	if err != nil {
		return nil, s.mapErr("get messages", err, nil)
	}
	defer func() { _ = rows.Close() }()
	out := []core.SessionMessage{}
	for rows.Next() {
		var m core.SessionMessage
		var role string
		var content []byte
		if err := rows.Scan(&m.ID, &m.SessionID, &role, &content, &m.Timestamp); err != nil {
			return nil, s.mapErr("get messages", err, nil)
		}
		m.Role, m.Content = core.MessageRole(role), content
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, s.mapErr("get messages", err, nil)
	}
	return out, nil
}

// AddMessage implements core.SessionStore. With Features.WritableCTEs it is
// one statement: the UPDATE that touches the session feeds the INSERT, so a
// missing session inserts nothing and reports zero rows, and the write is a
// single round trip. Otherwise the two run in one transaction.
func (s *Store) AddMessage(ctx context.Context, sessionID string, m core.SessionMessage) error {
	if hasNUL(sessionID) {
		return notFound(core.ErrSessionNotFound, "session %q not found", sessionID)
	}
	rows, err := s.messageRows(sessionID, []core.SessionMessage{m})
	if err != nil {
		return err
	}
	if s.features.WritableCTEs {
		return s.addMessageCTE(ctx, sessionID, rows[0])
	}
	return s.addMessageTx(ctx, sessionID, rows)
}

// addMessageTx touches the session and inserts the message in one
// transaction. (A function of its own: the closure moves rows to the heap,
// which the one-statement path need not pay for.)
func (s *Store) addMessageTx(ctx context.Context, sessionID string, rows []messageRow) error {
	return s.write(ctx, "add message", nil, func(ctx context.Context, tx bun.Tx) error {
		if err := s.touchSession(ctx, tx, sessionID); err != nil {
			return err
		}
		if s.prepared != nil {
			for _, r := range rows {
				if _, err := s.execHot(ctx, tx, hotInsertMessage, r.ID, r.SessionID, r.Role, string(r.Content), r.Timestamp); err != nil {
					return err
				}
			}
			return nil
		}
		_, err := tx.NewInsert().Model(&rows).Exec(ctx)
		return err
	})
}

// addMessageCTE touches the session and inserts the message in one
// statement.
func (s *Store) addMessageCTE(ctx context.Context, sessionID string, r messageRow) error {
	if s.features.Pipeline != nil {
		q := prepAddMessage.with(core.NowMillis(), sessionID, r.ID, r.Role, string(r.Content), r.Timestamp)
		return s.writeText(ctx, "add message", nil, &textWrite{stmts: []Stmt{q}, check: func(affected []int64) error {
			if affected[0] == 0 {
				return notFound(core.ErrSessionNotFound, "session %q not found", sessionID)
			}
			return nil
		}})
	}
	return s.write(ctx, "add message", nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewRaw(addMessageSQL, core.NowMillis(), sessionID, r.ID, r.Role, r.Content, r.Timestamp).Exec(ctx)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return notFound(core.ErrSessionNotFound, "session %q not found", sessionID)
		}
		return nil
	})
}

// addMessageSQL touches a session and inserts a message for it in one
// statement (Features.WritableCTEs): no session, no row.
const addMessageSQL = `WITH touched AS (
  UPDATE bread_sessions SET updated_at = ? WHERE id = ? RETURNING id
)
INSERT INTO bread_session_messages (id, session_id, role, content, timestamp)
SELECT ?, id, ?, ?, ? FROM touched`

// messageRows validates msgs and gives each a fresh, time-ordered ID.
func (s *Store) messageRows(sessionID string, msgs []core.SessionMessage) ([]messageRow, error) {
	rows := make([]messageRow, len(msgs))
	now := core.NowMillis()
	for i, m := range msgs {
		if err := s.checkText("a message role", string(m.Role)); err != nil {
			return nil, err
		}
		content, err := s.rawJSON("message content", m.Content)
		if err != nil {
			return nil, err
		}
		ts := m.Timestamp
		if ts == 0 {
			ts = now
		}
		rows[i] = messageRow{ID: newID(), SessionID: sessionID, Role: string(m.Role), Content: content, Timestamp: ts}
	}
	return rows, nil
}

// touchSession sets a session's updated_at to now, or reports it missing.
// It runs first in a write transaction so the session cannot vanish before
// the rows that reference it are written.
func (s *Store) touchSession(ctx context.Context, tx bun.Tx, id string) error {
	var res sql.Result
	var err error
	if s.prepared != nil {
		res, err = s.execHot(ctx, tx, hotTouchSession, core.NowMillis(), id)
	} else {
		res, err = tx.NewUpdate().Model((*sessionRow)(nil)).Set("updated_at = ?", core.NowMillis()).Where("id = ?", id).Exec(ctx)
	}
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return notFound(core.ErrSessionNotFound, "session %q not found", id)
	}
	return nil
}
