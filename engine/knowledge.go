package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/typed"
)

const defaultKnowledgeTokens = 2000

// knowledgeContext renders a session's recent knowledge for the prompt.
func knowledgeContext(ctx context.Context, ks core.KnowledgeStore, agentID, sessionID string, maxTokens int) (string, error) {
	nodes, err := ks.KnowledgeContext(ctx, agentID, sessionID, 100)
	if err != nil || len(nodes) == 0 {
		return "", err
	}
	if maxTokens <= 0 {
		maxTokens = defaultKnowledgeTokens
	}
	var b strings.Builder
	b.WriteString("## Knowledge Graph Context")
	for _, n := range nodes {
		b.WriteString("\n- ")
		b.WriteString(n.Label)
		if len(n.Data) > 0 {
			keys := slices.Sorted(maps.Keys(n.Data))
			extras := make([]string, len(keys))
			for i, k := range keys {
				extras[i] = fmt.Sprintf("%s: %v", k, n.Data[k])
			}
			b.WriteString(" (" + strings.Join(extras, ", ") + ")")
		}
	}
	return truncateUTF8(b.String(), maxTokens*4), nil
}

// truncateUTF8 cuts s to at most n bytes on a rune boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

type kgStoreArgs struct {
	Label     string         `json:"label" validate:"required" jsonschema:"description=Entity or concept label"`
	Data      map[string]any `json:"data,omitempty" jsonschema:"description=Additional properties"`
	RelatesTo *kgRelation    `json:"relatesTo,omitempty" jsonschema:"description=Optional relation to an existing node"`
}

type kgRelation struct {
	ID       string `json:"id" validate:"required"`
	Relation string `json:"relation" validate:"required"`
}

type kgQueryArgs struct {
	Query string `json:"query" validate:"required" jsonschema:"description=Search term to match against labels"`
	Limit int    `json:"limit,omitempty" validate:"omitempty,min=1,max=50"`
}

type kgForgetArgs struct {
	ID string `json:"id" validate:"required" jsonschema:"description=Node id to remove"`
}

// knowledgeTools are the core_kg_* tools over ks, scoped to one agent.
func knowledgeTools(ks core.KnowledgeStore, agentID string) []core.Tool {
	return []core.Tool{
		typed.DefineTool("kg_store", "Store a fact or entity in the knowledge graph", func(ctx context.Context, a kgStoreArgs, tc core.ToolContext) (core.KnowledgeNode, error) {
			n, err := ks.AddKnowledgeNode(ctx, core.NewKnowledgeNode{AgentID: agentID, SessionID: tc.SessionID, Label: a.Label, Data: a.Data})
			if err != nil {
				return n, err
			}
			if a.RelatesTo != nil {
				err = ks.AddKnowledgeEdge(ctx, core.KnowledgeEdge{FromID: n.ID, ToID: a.RelatesTo.ID, Relation: a.RelatesTo.Relation})
			}
			return n, err
		}),
		typed.DefineTool("kg_query", "Search the knowledge graph by label", func(ctx context.Context, a kgQueryArgs, _ core.ToolContext) ([]core.KnowledgeNode, error) {
			return ks.QueryKnowledge(ctx, core.KnowledgeQuery{AgentID: agentID, Query: a.Query, Limit: a.Limit})
		}),
		typed.DefineTool("kg_forget", "Remove a node from the knowledge graph by id", func(ctx context.Context, a kgForgetArgs, _ core.ToolContext) (map[string]bool, error) {
			deleted, err := ks.ForgetKnowledge(ctx, a.ID)
			return map[string]bool{"deleted": deleted}, err
		}),
	}
}
