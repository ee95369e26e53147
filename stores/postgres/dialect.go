package postgres

import (
	"encoding/json"

	"github.com/breadai/bread/stores/internal/bunstore"
)

// dialect is what PostgreSQL brings to bunstore: its schema and migration,
// SQLSTATE mapping, pos columns, jsonb containment for tags, ILIKE,
// single-statement AddMessage and, with Options.Embed, semantic search.
type dialect struct{ s *Store }

func (dialect) Name() string { return "postgres store" }

func (d dialect) Features() bunstore.Features {
	f := bunstore.Features{WritableCTEs: true, ILike: "ILIKE", Committers: 4, Pipeline: pipeline{}}
	if d.s.opts.Embed != nil {
		f.Embedder = d
	}
	return f
}

// InsertionOrder is the pos identity column. Loop iterations of one index
// are ordered by id, as they always have been here.
func (dialect) InsertionOrder(table string) string {
	if table == "bread_loop_iterations" {
		return "id"
	}
	return "pos"
}

// TagConditions match every tag at once with JSONB containment, which the
// GIN index on tags serves.
func (dialect) TagConditions(tags map[string]string) []bunstore.Condition {
	if len(tags) == 0 {
		return nil
	}
	raw, err := json.Marshal(tags)
	if err != nil {
		// A map[string]string always encodes; keep the filter closed anyway.
		return []bunstore.Condition{{Query: "FALSE"}}
	}
	return []bunstore.Condition{{Query: "tags @> ?::jsonb", Args: []any{string(raw)}}}
}
