package memory

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/breadai/bread/core"
)

// storedDocument is an ingested document, with lower-cased copies for
// search.
type storedDocument struct {
	rec                      core.DocumentRecord
	agentID, content         string
	lowerTitle, lowerContent string
	seq                      uint64
}

// IngestDocument implements core.DocumentStore.
func (s *Store) IngestDocument(ctx context.Context, d core.NewDocument) (core.DocumentRecord, error) {
	id := s.newID()
	doc := &storedDocument{
		rec:     core.DocumentRecord{ID: id, Title: d.Title, Source: d.Source},
		agentID: d.AgentID, content: d.Content,
		lowerTitle: strings.ToLower(d.Title), lowerContent: strings.ToLower(d.Content),
	}
	if err := s.lock(ctx); err != nil {
		return core.DocumentRecord{}, err
	}
	doc.seq = s.next()
	s.documents[id] = doc
	s.mu.Unlock()
	return doc.rec, nil
}

// SearchDocuments implements core.DocumentStore: documents of the agent
// whose title or content contains the query, ignoring case, oldest first.
func (s *Store) SearchDocuments(ctx context.Context, q core.DocumentQuery) ([]core.DocumentRecord, error) {
	query := strings.ToLower(q.Query)
	limit := cmp.Or(max(q.Limit, 0), 5)
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	var hits []*storedDocument
	for _, d := range s.documents {
		if d.agentID == q.AgentID && (strings.Contains(d.lowerTitle, query) || strings.Contains(d.lowerContent, query)) {
			hits = append(hits, d)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(hits, func(a, b *storedDocument) int { return cmp.Compare(a.seq, b.seq) })
	if len(hits) > limit {
		hits = hits[:limit]
	}
	out := make([]core.DocumentRecord, len(hits))
	for i, d := range hits {
		out[i] = d.rec
	}
	return out, nil
}

// ReadDocument implements core.DocumentStore.
func (s *Store) ReadDocument(ctx context.Context, agentID, id string) (core.Document, error) {
	if err := s.rlock(ctx); err != nil {
		return core.Document{}, err
	}
	d, ok := s.documents[id]
	s.mu.RUnlock()
	if !ok || d.agentID != agentID {
		return core.Document{}, notFound(core.ErrDocumentNotFound, "document %q not found", id)
	}
	return core.Document{Title: d.rec.Title, Content: d.content}, nil
}

func quote(s string) string { return strconv.Quote(s) }
