package bunstore

import (
	"context"
	"encoding/json"

	"github.com/breadai/bread/core"
)

const (
	defaultKnowledgeLimit = 10
	defaultContextLimit   = 100
	defaultDocumentLimit  = 5
)

// AddKnowledgeNode implements core.KnowledgeStore.
func (s *Store) AddKnowledgeNode(ctx context.Context, n core.NewKnowledgeNode) (core.KnowledgeNode, error) {
	if err := s.checkText("a knowledge node field", n.AgentID, n.SessionID, n.Label); err != nil {
		return core.KnowledgeNode{}, err
	}
	data := n.Data
	if data == nil {
		data = map[string]any{}
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return core.KnowledgeNode{}, s.validation("knowledge node data does not encode as JSON: %v", err)
	}
	unlock, lerr := s.lockWrites(ctx)
	if lerr != nil {
		return core.KnowledgeNode{}, lerr
	}
	defer unlock()
	row := kgNodeRow{ID: newID(), AgentID: n.AgentID, SessionID: n.SessionID, Label: n.Label, Data: string(raw), CreatedAt: core.NowMillis()}
	insert := s.db.NewInsert().Model(&row)
	if emb := s.features.Embedder; emb != nil {
		if insert, err = emb.EmbedInsert(ctx, insert, "bread_kg_nodes", "a knowledge node", n.Label); err != nil {
			return core.KnowledgeNode{}, err
		}
	}
	if _, err := insert.Exec(ctx); err != nil {
		return core.KnowledgeNode{}, s.mapErr("add knowledge node", err, nil)
	}
	return core.KnowledgeNode{ID: row.ID, Label: row.Label, Data: data}, nil
}

// AddKnowledgeEdge implements core.KnowledgeStore. Both nodes must exist.
func (s *Store) AddKnowledgeEdge(ctx context.Context, e core.KnowledgeEdge) error {
	unlock, lerr := s.lockWrites(ctx)
	if lerr != nil {
		return lerr
	}
	defer unlock()
	if err := s.checkText("a knowledge edge field", e.FromID, e.ToID, e.Relation); err != nil {
		return err
	}
	row := kgEdgeRow{ID: newID(), FromID: e.FromID, ToID: e.ToID, Relation: e.Relation}
	_, err := s.db.NewInsert().Model(&row).Exec(ctx)
	return s.mapErr("add knowledge edge", err, &core.BreadError{
		Code:    core.CodeNotFound,
		Message: "knowledge node " + quote(e.FromID) + " or " + quote(e.ToID) + " not found",
	})
}

// QueryKnowledge implements core.KnowledgeStore. With an Embedder it ranks
// the agent's embedded nodes by the similarity of their label to q.Query;
// without, it finds the nodes whose label contains q.Query (Features.ILike),
// newest first. An empty query lists the newest nodes either way.
func (s *Store) QueryKnowledge(ctx context.Context, q core.KnowledgeQuery) ([]core.KnowledgeNode, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	if hasNUL(q.AgentID, q.Query) {
		return []core.KnowledgeNode{}, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = defaultKnowledgeLimit
	}
	var rows []kgNodeRow
	sel := s.db.NewSelect().Model(&rows).Where("agent_id = ?", q.AgentID)
	if emb := s.features.Embedder; emb != nil && q.Query != "" {
		var err error
		if sel, err = emb.RankBySimilarity(ctx, sel, "bread_kg_nodes", "a knowledge query", q.Query); err != nil {
			return nil, err
		}
	} else {
		sel = sel.Where(s.clauses.labelMatch, likePattern(q.Query))
	}
	err := sel.OrderExpr(s.clauses.nodes).Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, s.mapErr("query knowledge", err, nil)
	}
	return s.nodes(rows)
}

// ForgetKnowledge implements core.KnowledgeStore; the node's edges cascade.
func (s *Store) ForgetKnowledge(ctx context.Context, id string) (bool, error) {
	unlock, lerr := s.lockWrites(ctx)
	if lerr != nil {
		return false, lerr
	}
	defer unlock()
	if hasNUL(id) {
		return false, nil
	}
	res, err := s.db.NewDelete().Model((*kgNodeRow)(nil)).Where("id = ?", id).Exec(ctx)
	if err != nil {
		return false, s.mapErr("forget knowledge", err, nil)
	}
	n, err := res.RowsAffected()
	return n > 0, s.mapErr("forget knowledge", err, nil)
}

// KnowledgeContext implements core.KnowledgeStore.
func (s *Store) KnowledgeContext(ctx context.Context, agentID, sessionID string, limit int) ([]core.KnowledgeNode, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	if hasNUL(agentID, sessionID) {
		return []core.KnowledgeNode{}, nil
	}
	if limit <= 0 {
		limit = defaultContextLimit
	}
	var rows []kgNodeRow
	q := s.db.NewSelect().Model(&rows).Where("agent_id = ?", agentID)
	if sessionID == "" {
		q = q.Where("session_id IS NULL")
	} else {
		q = q.Where("session_id = ?", sessionID)
	}
	if err := q.OrderExpr(s.clauses.nodes).Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, s.mapErr("knowledge context", err, nil)
	}
	return s.nodes(rows)
}

func (s *Store) nodes(rows []kgNodeRow) ([]core.KnowledgeNode, error) {
	out := make([]core.KnowledgeNode, 0, len(rows))
	for _, r := range rows {
		n, err := r.node(s.errs)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}
