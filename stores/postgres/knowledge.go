package postgres

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/uptrace/bun"

	"github.com/breadai/bread/core"
)

const (
	defaultKnowledgeLimit = 10
	defaultContextLimit   = 100
	defaultDocumentLimit  = 5
)

// AddKnowledgeNode implements core.KnowledgeStore.
func (s *Store) AddKnowledgeNode(ctx context.Context, n core.NewKnowledgeNode) (core.KnowledgeNode, error) {
	if err := checkText("a knowledge node field", n.AgentID, n.SessionID, n.Label); err != nil {
		return core.KnowledgeNode{}, err
	}
	data := n.Data
	if data == nil {
		data = map[string]any{}
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return core.KnowledgeNode{}, validation("knowledge node data does not encode as JSON: %v", err)
	}
	if err := s.read(); err != nil {
		return core.KnowledgeNode{}, err
	}
	row := kgNodeRow{ID: newID(), AgentID: n.AgentID, SessionID: n.SessionID, Label: n.Label, Data: string(raw), CreatedAt: core.NowMillis()}
	insert := s.db.NewInsert().Model(&row)
	if s.opts.Embed != nil {
		col, err := s.vectorColumnFor(ctx, "bread_kg_nodes")
		if err != nil {
			return core.KnowledgeNode{}, err
		}
		vec, err := s.embed(ctx, "a knowledge node", n.Label)
		if err != nil {
			return core.KnowledgeNode{}, err
		}
		insert = insert.Value("embedding", "?::"+col.castType(), col.literal(vec))
	}
	if _, err := insert.Exec(ctx); err != nil {
		return core.KnowledgeNode{}, s.mapErr("add knowledge node", err, nil)
	}
	return core.KnowledgeNode{ID: row.ID, Label: row.Label, Data: data}, nil
}

// AddKnowledgeEdge implements core.KnowledgeStore. Both nodes must exist.
func (s *Store) AddKnowledgeEdge(ctx context.Context, e core.KnowledgeEdge) error {
	if err := s.read(); err != nil {
		return err
	}
	if err := checkText("a knowledge edge field", e.FromID, e.ToID, e.Relation); err != nil {
		return err
	}
	row := kgEdgeRow{ID: newID(), FromID: e.FromID, ToID: e.ToID, Relation: e.Relation}
	_, err := s.db.NewInsert().Model(&row).Exec(ctx)
	return s.mapErr("add knowledge edge", err, &core.BreadError{
		Code:    core.CodeNotFound,
		Message: "knowledge node " + quote(e.FromID) + " or " + quote(e.ToID) + " not found",
	})
}

// QueryKnowledge implements core.KnowledgeStore. With Options.Embed it
// ranks the agent's embedded nodes by the cosine similarity of their label
// to q.Query; without, it finds the nodes whose label contains q.Query
// (ILIKE), newest first. An empty query lists the newest nodes either way.
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
	if s.opts.Embed != nil && q.Query != "" {
		var err error
		if sel, err = s.bySimilarity(ctx, sel, "bread_kg_nodes", "a knowledge query", q.Query); err != nil {
			return nil, err
		}
	} else {
		sel = sel.Where(`label ILIKE ? ESCAPE '\'`, likePattern(q.Query))
	}
	err := sel.OrderExpr("created_at DESC, pos DESC").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, s.mapErr("query knowledge", err, nil)
	}
	return nodes(rows)
}

// ForgetKnowledge implements core.KnowledgeStore; the node's edges cascade.
func (s *Store) ForgetKnowledge(ctx context.Context, id string) (bool, error) {
	if err := s.read(); err != nil {
		return false, err
	}
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
	if err := q.OrderExpr("created_at DESC, pos DESC").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, s.mapErr("knowledge context", err, nil)
	}
	return nodes(rows)
}

func nodes(rows []kgNodeRow) ([]core.KnowledgeNode, error) {
	out := make([]core.KnowledgeNode, 0, len(rows))
	for _, r := range rows {
		n, err := r.node()
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// bySimilarity orders sel by the cosine similarity of table's embeddings to
// the embedding of query.
func (s *Store) bySimilarity(ctx context.Context, sel *bun.SelectQuery, table, what, query string) (*bun.SelectQuery, error) {
	col, err := s.vectorColumnFor(ctx, table)
	if err != nil {
		return nil, err
	}
	vec, err := s.embed(ctx, what, query)
	if err != nil {
		return nil, err
	}
	where, order := col.similarityOrder()
	return sel.Where(where, len(vec)).OrderExpr(order, col.literal(vec)), nil
}

// likePattern makes a LIKE pattern matching query anywhere, with LIKE's own
// wildcards in query taken literally.
func likePattern(query string) string {
	return "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(query) + "%"
}

func quote(s string) string { return `"` + s + `"` }
