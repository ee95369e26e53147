package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/breadai/bread/core"
)

// IngestDocument implements core.DocumentStore.
func (s *Store) IngestDocument(ctx context.Context, d core.NewDocument) (core.DocumentRecord, error) {
	unlock, lerr := s.lockWrites(ctx)
	if lerr != nil {
		return core.DocumentRecord{}, lerr
	}
	defer unlock()
	if err := checkText("a document field", d.AgentID, d.Title, d.Content, d.Source); err != nil {
		return core.DocumentRecord{}, err
	}
	row := documentRow{ID: newID(), AgentID: d.AgentID, Title: d.Title, Content: d.Content, Source: d.Source, CreatedAt: core.NowMillis()}
	if _, err := s.db.NewInsert().Model(&row).Exec(ctx); err != nil {
		return core.DocumentRecord{}, s.mapErr("ingest document", err, nil)
	}
	return core.DocumentRecord{ID: row.ID, Title: row.Title, Source: row.Source}, nil
}

// SearchDocuments implements core.DocumentStore: the agent's documents whose
// title or content contains q.Query, case-insensitively for ASCII, newest
// first.
func (s *Store) SearchDocuments(ctx context.Context, q core.DocumentQuery) ([]core.DocumentRecord, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	if hasNUL(q.AgentID, q.Query) {
		return []core.DocumentRecord{}, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = defaultDocumentLimit
	}
	pattern := likePattern(q.Query)
	var rows []documentRow
	err := s.db.NewSelect().Model(&rows).Column("id", "title", "source").
		Where("agent_id = ?", q.AgentID).
		Where(`(title LIKE ? ESCAPE '\' OR content LIKE ? ESCAPE '\')`, pattern, pattern).
		OrderExpr("created_at DESC, rowid DESC").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, s.mapErr("search documents", err, nil)
	}
	out := make([]core.DocumentRecord, len(rows))
	for i, r := range rows {
		out[i] = core.DocumentRecord{ID: r.ID, Title: r.Title, Source: r.Source}
	}
	return out, nil
}

// ReadDocument implements core.DocumentStore.
func (s *Store) ReadDocument(ctx context.Context, agentID, id string) (core.Document, error) {
	if err := s.read(); err != nil {
		return core.Document{}, err
	}
	var row documentRow
	err := sql.ErrNoRows
	if !hasNUL(agentID, id) {
		err = s.db.NewSelect().Model(&row).Column("title", "content").Where("id = ?", id).Where("agent_id = ?", agentID).Scan(ctx)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return core.Document{}, notFound(core.ErrDocumentNotFound, "document %q not found", id)
	}
	if err != nil {
		return core.Document{}, s.mapErr("read document", err, nil)
	}
	return core.Document{Title: row.Title, Content: row.Content}, nil
}
