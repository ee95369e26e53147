package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/breadai/bread/core"
)

// CreateSession implements core.SessionStore.
func (s *Store) CreateSession(ctx context.Context, n core.NewSession) (core.Session, error) {
	if err := s.read(); err != nil {
		return core.Session{}, err
	}
	if err := checkText("a session id or agent id", n.ID, n.AgentID); err != nil {
		return core.Session{}, err
	}
	if err := checkTags(n.Tags); err != nil {
		return core.Session{}, err
	}
	id := n.ID
	if id == "" {
		id = newID()
	}
	tags, err := marshalTags(n.Tags)
	if err != nil {
		return core.Session{}, err
	}
	now := core.NowMillis()
	row := sessionRow{ID: id, CreatedAt: now, UpdatedAt: now, AgentID: n.AgentID, Tags: tags}
	if _, err := s.db.NewInsert().Model(&row).Exec(ctx); err != nil {
		return core.Session{}, s.mapErr("create session "+id, err, nil)
	}
	return row.session()
}

// GetSession implements core.SessionStore.
func (s *Store) GetSession(ctx context.Context, id string) (core.Session, error) {
	if err := s.read(); err != nil {
		return core.Session{}, err
	}
	var row sessionRow
	err := sql.ErrNoRows
	if !hasNUL(id) {
		err = s.db.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return core.Session{}, notFound(core.ErrSessionNotFound, "session %q not found", id)
	}
	if err != nil {
		return core.Session{}, s.mapErr("get session", err, nil)
	}
	return row.session()
}

// ListSessions implements core.SessionStore. Sessions come oldest first.
func (s *Store) ListSessions(ctx context.Context, f core.SessionFilter) ([]core.Session, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	if tagsHaveNUL(f.Tags) {
		return []core.Session{}, nil
	}
	var rows []sessionRow
	q := s.db.NewSelect().Model(&rows).OrderExpr("created_at ASC, pos ASC")
	q = whereTags(q, f.Tags)
	if err := q.Scan(ctx); err != nil {
		return nil, s.mapErr("list sessions", err, nil)
	}
	out := make([]core.Session, 0, len(rows))
	for _, r := range rows {
		sess, err := r.session()
		if err != nil {
			return nil, err
		}
		out = append(out, sess)
	}
	return out, nil
}

// whereTags keeps the sessions carrying every tag, with JSONB containment
// (which the GIN index on tags serves).
func whereTags[Q interface {
	Where(string, ...any) Q
}](q Q, tags map[string]string) Q {
	if len(tags) == 0 {
		return q
	}
	raw, err := json.Marshal(tags)
	if err != nil {
		// A map[string]string always encodes; keep the filter closed anyway.
		return q.Where("FALSE")
	}
	return q.Where("tags @> ?::jsonb", string(raw))
}

// DeleteSession implements core.SessionStore. Messages, checkpoints and
// logged crumbs go with it through ON DELETE CASCADE.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	if err := s.read(); err != nil {
		return err
	}
	if hasNUL(id) {
		return nil
	}
	_, err := s.db.NewDelete().Model((*sessionRow)(nil)).Where("id = ?", id).Exec(ctx)
	return s.mapErr("delete session", err, nil)
}

// CleanupSessions implements core.SessionStore in one DELETE statement; the
// foreign keys cascade to messages, checkpoints and crumbs.
func (s *Store) CleanupSessions(ctx context.Context, o core.CleanupOptions) (int, error) {
	if err := s.read(); err != nil {
		return 0, err
	}
	if o.OlderThan <= 0 || tagsHaveNUL(o.Tags) {
		return 0, nil
	}
	cutoff := core.NowMillis() - o.OlderThan.Milliseconds()
	q := s.db.NewDelete().Model((*sessionRow)(nil)).Where("updated_at < ?", cutoff)
	q = whereTags(q, o.Tags)
	res, err := q.Exec(ctx)
	if err != nil {
		return 0, s.mapErr("cleanup sessions", err, nil)
	}
	n, err := res.RowsAffected()
	return int(n), s.mapErr("cleanup sessions", err, nil)
}

// GetMessages implements core.SessionStore.
func (s *Store) GetMessages(ctx context.Context, sessionID string) ([]core.SessionMessage, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	if hasNUL(sessionID) {
		return []core.SessionMessage{}, nil
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

// AddMessage implements core.SessionStore in one statement: the UPDATE
// that touches the session feeds the INSERT, so a missing session inserts
// nothing and reports zero rows, and the write is a single round trip.
func (s *Store) AddMessage(ctx context.Context, sessionID string, m core.SessionMessage) error {
	if hasNUL(sessionID) {
		return notFound(core.ErrSessionNotFound, "session %q not found", sessionID)
	}
	rows, err := messageRows(sessionID, []core.SessionMessage{m})
	if err != nil {
		return err
	}
	if err := s.read(); err != nil {
		return err
	}
	r := rows[0]
	res, err := s.db.NewRaw(`WITH touched AS (
  UPDATE bread_sessions SET updated_at = ? WHERE id = ? RETURNING id
)
INSERT INTO bread_session_messages (id, session_id, role, content, timestamp)
SELECT ?, id, ?, ?, ? FROM touched`, core.NowMillis(), sessionID, r.ID, r.Role, r.Content, r.Timestamp).Exec(ctx)
	if err != nil {
		return s.mapErr("add message", err, nil)
	}
	if n, err := res.RowsAffected(); err != nil {
		return s.mapErr("add message", err, nil)
	} else if n == 0 {
		return notFound(core.ErrSessionNotFound, "session %q not found", sessionID)
	}
	return nil
}

// messageRows validates msgs and gives each a fresh, time-ordered ID.
func messageRows(sessionID string, msgs []core.SessionMessage) ([]messageRow, error) {
	rows := make([]messageRow, len(msgs))
	now := core.NowMillis()
	for i, m := range msgs {
		if err := checkText("a message role", string(m.Role)); err != nil {
			return nil, err
		}
		content, err := rawJSON("message content", m.Content)
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
func touchSession(ctx context.Context, tx bun.Tx, id string) error {
	res, err := tx.NewUpdate().Model((*sessionRow)(nil)).Set("updated_at = ?", core.NowMillis()).Where("id = ?", id).Exec(ctx)
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

func newID() string { return uuid.Must(uuid.NewV7()).String() }
