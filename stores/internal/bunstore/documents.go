package bunstore

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
	if err := s.checkText("a document field", d.AgentID, d.Title, d.Content, d.Source); err != nil {
		return core.DocumentRecord{}, err
	}
	row := documentRow{ID: newID(), AgentID: d.AgentID, Title: d.Title, Content: d.Content, Source: d.Source, CreatedAt: core.NowMillis()}
	insert := s.db.NewInsert().Model(&row)
	if emb := s.features.Embedder; emb != nil {
		var err error
		if insert, err = emb.EmbedInsert(ctx, insert, "bread_documents", "a document", d.Content); err != nil {
			return core.DocumentRecord{}, err
		}
	}
	if _, err := insert.Exec(ctx); err != nil {
		return core.DocumentRecord{}, s.mapErr("ingest document", err, nil)
	}
	return core.DocumentRecord{ID: row.ID, Title: row.Title, Source: row.Source}, nil
}

// SearchDocuments implements core.DocumentStore. With an Embedder it ranks
// the agent's embedded documents by the similarity of their content to
// q.Query; without, it finds the documents whose title or content contains
// q.Query (Features.ILike), newest first. An empty query lists the newest
// documents either way.
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
	var rows []documentRow
	sel := s.db.NewSelect().Model(&rows).Column("id", "title", "source").Where("agent_id = ?", q.AgentID)
	if emb := s.features.Embedder; emb != nil && q.Query != "" {
		var err error
		if sel, err = emb.RankBySimilarity(ctx, sel, "bread_documents", "a document query", q.Query); err != nil {
			return nil, err
		}
	} else {
		pattern := likePattern(q.Query)
		sel = sel.Where(s.clauses.documentMatch, pattern, pattern)
	}
	err := sel.OrderExpr(s.clauses.documents).Limit(int64(limit)).Scan(ctx)
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
