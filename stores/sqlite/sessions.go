package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/breadai/bread/core"
)

// CreateSession implements core.SessionStore.
func (s *Store) CreateSession(ctx context.Context, n core.NewSession) (core.Session, error) {
	unlock, lerr := s.lockWrites(ctx)
	if lerr != nil {
		return core.Session{}, lerr
	}
	defer unlock()
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
	q := s.db.NewSelect().Model(&rows).OrderExpr("created_at ASC, rowid ASC")
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

// whereTags keeps the sessions carrying every tag. json_each compares keys
// as plain strings, so a key may hold any character, dots and quotes too.
func whereTags[Q interface {
	Where(string, ...any) Q
}](q Q, tags map[string]string) Q {
	for k, v := range tags {
		q = q.Where("EXISTS (SELECT 1 FROM json_each(tags) WHERE json_each.key = ? AND json_each.type = 'text' AND json_each.value = ?)", k, v)
	}
	return q
}

// DeleteSession implements core.SessionStore. Messages, checkpoints and
// logged crumbs go with it through ON DELETE CASCADE.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	unlock, lerr := s.lockWrites(ctx)
	if lerr != nil {
		return lerr
	}
	defer unlock()
	if hasNUL(id) {
		return nil
	}
	_, err := s.db.NewDelete().Model((*sessionRow)(nil)).Where("id = ?", id).Exec(ctx)
	return s.mapErr("delete session", err, nil)
}

// CleanupSessions implements core.SessionStore in one DELETE statement; the
// foreign keys cascade to messages, checkpoints and crumbs.
func (s *Store) CleanupSessions(ctx context.Context, o core.CleanupOptions) (int, error) {
	unlock, lerr := s.lockWrites(ctx)
	if lerr != nil {
		return 0, lerr
	}
	defer unlock()
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

// AddMessage implements core.SessionStore.
func (s *Store) AddMessage(ctx context.Context, sessionID string, m core.SessionMessage) error {
	if hasNUL(sessionID) {
		return notFound(core.ErrSessionNotFound, "session %q not found", sessionID)
	}
	rows, err := messageRows(sessionID, []core.SessionMessage{m})
	if err != nil {
		return err
	}
	return s.write(ctx, "add message", nil, func(ctx context.Context, tx bun.Tx) error {
		if err := touchSession(ctx, tx, sessionID); err != nil {
			return err
		}
		_, err := tx.NewInsert().Model(&rows).Exec(ctx)
		return err
	})
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
