package memory

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/breadai/bread/core"
)

// storedNode is a knowledge-graph node. Data is kept encoded, as a SQL store
// keeps it: what reads back is the JSON form of what was written, in fresh
// maps every time.
type storedNode struct {
	id, agentID, sessionID string
	label, lowerLabel      string
	data                   []byte
	seq                    uint64
}

// AddKnowledgeNode implements core.KnowledgeStore. Data that does not encode
// as JSON is a VALIDATION_ERROR.
func (s *Store) AddKnowledgeNode(ctx context.Context, n core.NewKnowledgeNode) (core.KnowledgeNode, error) {
	data := n.Data
	if data == nil {
		data = map[string]any{}
	}
	encoded, err := json.Marshal(data)
	if err != nil {
		return core.KnowledgeNode{}, invalid("knowledge node %q: data does not encode as JSON: %v", n.Label, err)
	}
	id := s.newID()
	node := &storedNode{
		id: id, agentID: n.AgentID, sessionID: n.SessionID,
		label: n.Label, lowerLabel: strings.ToLower(n.Label), data: encoded,
	}
	if err := s.lock(ctx); err != nil {
		return core.KnowledgeNode{}, err
	}
	node.seq = s.next()
	s.nodes[id] = node
	s.mu.Unlock()
	return node.public()
}

// AddKnowledgeEdge implements core.KnowledgeStore. Both ends must exist:
// otherwise the error has code NOT_FOUND.
func (s *Store) AddKnowledgeEdge(ctx context.Context, e core.KnowledgeEdge) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	for _, id := range []string{e.FromID, e.ToID} {
		if _, ok := s.nodes[id]; !ok {
			return &core.BreadError{Code: core.CodeNotFound, Message: "knowledge node " + quote(id) + " not found"}
		}
	}
	s.edges = append(s.edges, e)
	return nil
}

// QueryKnowledge implements core.KnowledgeStore: nodes of the agent whose
// label contains the query, ignoring case.
func (s *Store) QueryKnowledge(ctx context.Context, q core.KnowledgeQuery) ([]core.KnowledgeNode, error) {
	query := strings.ToLower(q.Query)
	return s.newestNodes(ctx, cmp.Or(max(q.Limit, 0), 10), func(n *storedNode) bool {
		return n.agentID == q.AgentID && strings.Contains(n.lowerLabel, query)
	})
}

// ForgetKnowledge implements core.KnowledgeStore.
func (s *Store) ForgetKnowledge(ctx context.Context, id string) (bool, error) {
	if err := s.lock(ctx); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	if _, ok := s.nodes[id]; !ok {
		return false, nil
	}
	delete(s.nodes, id)
	// Edges are only ever read under the write lock, so they may change in
	// place.
	s.edges = slices.DeleteFunc(s.edges, func(e core.KnowledgeEdge) bool {
		return e.FromID == id || e.ToID == id
	})
	return true, nil
}

// KnowledgeContext implements core.KnowledgeStore.
func (s *Store) KnowledgeContext(ctx context.Context, agentID, sessionID string, limit int) ([]core.KnowledgeNode, error) {
	return s.newestNodes(ctx, cmp.Or(max(limit, 0), 100), func(n *storedNode) bool {
		return n.agentID == agentID && n.sessionID == sessionID
	})
}

// newestNodes returns at most limit nodes matching keep, newest first.
func (s *Store) newestNodes(ctx context.Context, limit int, keep func(*storedNode) bool) ([]core.KnowledgeNode, error) {
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	var hits []*storedNode
	for _, n := range s.nodes {
		if keep(n) {
			hits = append(hits, n)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(hits, func(a, b *storedNode) int { return cmp.Compare(b.seq, a.seq) })
	if len(hits) > limit {
		hits = hits[:limit]
	}
	out := make([]core.KnowledgeNode, len(hits))
	for i, n := range hits {
		var err error
		if out[i], err = n.public(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// public returns the node as the port shows it, with freshly decoded data.
func (n *storedNode) public() (core.KnowledgeNode, error) {
	var data map[string]any
	if err := json.Unmarshal(n.data, &data); err != nil {
		return core.KnowledgeNode{}, &core.BreadError{Code: core.CodeStoreError, Message: "memory store: knowledge node " + quote(n.id) + " data does not decode", Cause: err}
	}
	if data == nil {
		data = map[string]any{} // data that encoded as null
	}
	return core.KnowledgeNode{ID: n.id, Label: n.label, Data: data}, nil
}
