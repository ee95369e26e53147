package bunstore

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
	if s.closed.Load() {
		return core.Session{}, s.storeClosed
	}
	if err := s.checkText("a session id, agent id or owner", n.ID, n.AgentID, n.Owner); err != nil {
		return core.Session{}, err
	}
	if err := s.checkTags(n.Tags); err != nil {
		return core.Session{}, err
	}
	id := n.ID
	if id == "" {
		id = newID()
	}
	tags, err := s.marshalTags(n.Tags)
	if err != nil {
		return core.Session{}, err
	}
	now := core.NowMillis()
	row := sessionRow{ID: id, CreatedAt: now, UpdatedAt: now, AgentID: n.AgentID, Tags: tags, Owner: n.Owner}
	if s.features.Pipeline != nil {
		err = s.writeText(ctx, "create session "+id, nil, &textWrite{stmts: []Stmt{row.insertStmt()}})
	} else {
		err = s.write(ctx, "create session "+id, nil, row.insert(s))
	}
	if err != nil {
		return core.Session{}, err
	}
	return row.session(s.errs)
}

// args are r's values in the order of hotInsertSession's placeholders.
func (r *sessionRow) args() []any {
	return []any{r.ID, r.CreatedAt, r.UpdatedAt, nullString(r.AgentID), r.Tags, nullString(r.Owner)}
}

// insertStmt is r's INSERT, prepared (prepInsertSession).
func (r *sessionRow) insertStmt() Stmt { return prepInsertSession.with(r.args()...) }

// insert is the write that inserts r.
func (r *sessionRow) insert(s *Store) func(ctx context.Context, tx bun.Tx) error {
	return func(ctx context.Context, tx bun.Tx) error {
		if s.prepared != nil {
			_, err := s.execHot(ctx, tx, hotInsertSession, r.args()...)
			return err
		}
		_, err := tx.NewInsert().Model(r).Exec(ctx)
		return err
	}
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
	return row.session(s.errs)
}

// ListSessions implements core.SessionStore. Sessions come oldest first.
func (s *Store) ListSessions(ctx context.Context, f core.SessionFilter) ([]core.Session, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	if tagsHaveNUL(f.Tags) || hasNUL(f.Owner) {
		return []core.Session{}, nil
	}
	var rows []sessionRow
	q := s.db.NewSelect().Model(&rows).OrderExpr(s.clauses.sessions)
	q = whereTags(s.d, q, f.Tags)
	if f.Owner != "" {
		q = q.Where("owner = ?", f.Owner)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, s.mapErr("list sessions", err, nil)
	}
	out := make([]core.Session, 0, len(rows))
	for _, r := range rows {
		sess, err := r.session(s.errs)
		if err != nil {
			return nil, err
		}
		out = append(out, sess)
	}
	return out, nil
}

// whereTags keeps the sessions carrying every tag, through the dialect's
// conditions.
func whereTags[Q interface {
	Where(string, ...any) Q
}](d Dialect, q Q, tags map[string]string) Q {
	for _, c := range d.TagConditions(tags) {
		q = q.Where(c.Query, c.Args...)
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
	if o.OlderThan <= 0 || tagsHaveNUL(o.Tags) || hasNUL(o.Owner) {
		return 0, nil
	}
	cutoff := core.NowMillis() - o.OlderThan.Milliseconds()
	q := s.db.NewDelete().Model((*sessionRow)(nil)).Where("updated_at < ?", cutoff)
	q = whereTags(s.d, q, o.Tags)
	if o.Owner != "" {
		q = q.Where("owner = ?", o.Owner)
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return 0, s.mapErr("cleanup sessions", err, nil)
	}
	n, err := res.RowsAffected()
	return int(n), s.mapErr("cleanup sessions", err, nil)
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }
