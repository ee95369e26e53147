package postgres

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/uptrace/bun"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/internal/bunstore"
)

// embeddingTables are the tables that get an embedding column when
// Options.Embed is set.
var embeddingTables = []string{"bread_kg_nodes", "bread_documents"}

// vectorColumn is how one table stores embeddings.
type vectorColumn struct {
	pgvector bool
	// schema is the quoted schema of the vector extension, for qualified
	// names: the extension may live outside the search_path.
	schema string
}

// castType is the SQL type a literal embedding is cast to.
func (v vectorColumn) castType() string {
	if v.pgvector {
		return v.schema + ".vector"
	}
	return "real[]"
}

// literal is v written as the column's text form.
func (v vectorColumn) literal(vec []float32) string {
	open, close := byte('{'), byte('}')
	if v.pgvector {
		open, close = '[', ']'
	}
	b := make([]byte, 0, len(vec)*10+2)
	b = append(b, open)
	for i, f := range vec {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(f), 'g', -1, 32)
	}
	return string(append(b, close))
}

// similarityOrder is an ORDER BY expression ranking rows by cosine
// similarity of their embedding to the query vector, most similar first,
// and a WHERE condition that keeps the rows it can rank.
func (v vectorColumn) similarityOrder() (where, order string) {
	if v.pgvector {
		// <=> is cosine distance; pgvector's index support makes this the
		// form to keep.
		return "embedding IS NOT NULL AND " + v.schema + ".vector_dims(embedding) = ?",
			"embedding OPERATOR(" + v.schema + ".<=>) ?::" + v.castType() + " ASC"
	}
	// Without pgvector the cosine is computed in SQL: dot product over the
	// product of the norms, in double precision. A zero vector has no
	// direction and sorts last.
	return "embedding IS NOT NULL AND cardinality(embedding) = ?",
		`(SELECT SUM(a::float8 * b::float8) / NULLIF(SQRT(SUM(a::float8 * a::float8)) * SQRT(SUM(b::float8 * b::float8)), 0)
  FROM unnest(embedding, ?::real[]) AS t(a, b)) DESC NULLS LAST`
}

// EmbedInsert implements bunstore.Embedder: the embedding of text goes in
// table's embedding column, cast to its kind.
func (d dialect) EmbedInsert(ctx context.Context, ins *bun.InsertQuery, table, what, text string) (*bun.InsertQuery, error) {
	col, err := d.s.vectorColumnFor(ctx, table)
	if err != nil {
		return nil, err
	}
	vec, err := d.s.embed(ctx, what, text)
	if err != nil {
		return nil, err
	}
	return ins.Value("embedding", "?::"+col.castType(), col.literal(vec)), nil
}

// RankBySimilarity implements bunstore.Embedder: it orders sel by the cosine
// similarity of table's embeddings to the embedding of query.
func (d dialect) RankBySimilarity(ctx context.Context, sel *bun.SelectQuery, table, what, query string) (*bun.SelectQuery, error) {
	col, err := d.s.vectorColumnFor(ctx, table)
	if err != nil {
		return nil, err
	}
	vec, err := d.s.embed(ctx, what, query)
	if err != nil {
		return nil, err
	}
	where, order := col.similarityOrder()
	return sel.Where(where, len(vec)).OrderExpr(order, col.literal(vec)), nil
}

// migrateVectors makes sure both embedding tables have an embedding column,
// of the kind already there or, for a new column, of the kind Options.Vectors
// and the server allow.
func (s *Store) migrateVectors(ctx context.Context, tx bun.IDB) (map[string]vectorColumn, error) {
	have, err := embeddingColumns(ctx, tx)
	if err != nil {
		return nil, err
	}
	if len(have) == len(embeddingTables) {
		return have, nil
	}
	col, err := s.chooseVectorColumn(ctx, tx)
	if err != nil {
		return nil, err
	}
	for _, table := range embeddingTables {
		if _, ok := have[table]; ok {
			continue
		}
		if _, err := tx.ExecContext(ctx, "ALTER TABLE "+table+" ADD COLUMN IF NOT EXISTS embedding "+col.castType()); err != nil {
			return nil, err
		}
		have[table] = col
	}
	return have, nil
}

// chooseVectorColumn enables pgvector when allowed and possible.
func (s *Store) chooseVectorColumn(ctx context.Context, tx bun.IDB) (vectorColumn, error) {
	if s.opts.Vectors == VectorArray {
		s.opts.Logger.InfoContext(ctx, "postgres store: embeddings in real[] columns, cosine similarity computed in SQL", "reason", "Options.Vectors is VectorArray")
		return vectorColumn{}, nil
	}
	// A failed statement aborts the transaction; the savepoint confines
	// the failure to this attempt.
	if _, err := tx.ExecContext(ctx, "SAVEPOINT bread_vector"); err != nil {
		return vectorColumn{}, err
	}
	_, extErr := tx.ExecContext(ctx, "CREATE EXTENSION IF NOT EXISTS vector")
	if extErr != nil {
		if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT bread_vector"); err != nil {
			return vectorColumn{}, err
		}
		if s.opts.Vectors == VectorPgvector {
			return vectorColumn{}, &core.BreadError{
				Code:    core.CodeStoreError,
				Message: "postgres store: Options.Vectors is VectorPgvector but the vector extension cannot be enabled: " + pgMessage(extErr),
				Cause:   extErr,
			}
		}
		s.opts.Logger.InfoContext(ctx, "postgres store: pgvector unavailable; embeddings in real[] columns, cosine similarity computed in SQL", "reason", pgMessage(extErr))
		return vectorColumn{}, nil
	}
	if _, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT bread_vector"); err != nil {
		return vectorColumn{}, err
	}
	var schema string
	err := tx.QueryRowContext(ctx, "SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'vector'").Scan(&schema)
	if err != nil {
		return vectorColumn{}, err
	}
	s.opts.Logger.InfoContext(ctx, "postgres store: embeddings in pgvector columns", "schema", schema)
	return vectorColumn{pgvector: true, schema: schema}, nil
}

// embeddingColumns reads the kind of the embedding columns that exist.
func embeddingColumns(ctx context.Context, db bun.IDB) (map[string]vectorColumn, error) {
	rows, err := db.QueryContext(ctx, `SELECT c.relname::text, t.typname::text, t.typnamespace::regnamespace::text
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_type t ON t.oid = a.atttypid
WHERE c.oid IN (to_regclass('bread_kg_nodes'), to_regclass('bread_documents'))
  AND a.attname = 'embedding' AND NOT a.attisdropped`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]vectorColumn{}
	for rows.Next() {
		var table, typ, schema string
		if err := rows.Scan(&table, &typ, &schema); err != nil {
			return nil, err
		}
		out[table] = vectorColumn{pgvector: typ == "vector", schema: schema}
	}
	return out, rows.Err()
}

// vectorColumnFor returns how table stores embeddings, reading the catalog
// once when Migrate ran in another process.
func (s *Store) vectorColumnFor(ctx context.Context, table string) (vectorColumn, error) {
	s.vectorsMu.Lock()
	defer s.vectorsMu.Unlock()
	if col, ok := s.vectors[table]; ok {
		return col, nil
	}
	have, err := embeddingColumns(ctx, s.DB())
	if err != nil {
		return vectorColumn{}, bunstore.MapError(&s.shared, "read embedding columns", err, nil)
	}
	col, ok := have[table]
	if !ok {
		return vectorColumn{}, &core.BreadError{
			Code:    core.CodeStoreError,
			Message: "postgres store: Options.Embed is set but " + table + " has no embedding column: run Migrate",
		}
	}
	s.vectors = have
	return col, nil
}

// embed calls Options.Embed and checks what it returns.
func (s *Store) embed(ctx context.Context, what, text string) ([]float32, error) {
	vec, err := s.opts.Embed(ctx, text)
	if err != nil {
		var be *core.BreadError
		if errors.As(err, &be) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, &core.BreadError{Code: core.CodeStoreError, Message: "postgres store: embedding " + what + ": " + err.Error(), Cause: err}
	}
	if len(vec) == 0 {
		return nil, &core.BreadError{Code: core.CodeStoreError, Message: "postgres store: embedding " + what + ": Options.Embed returned an empty vector"}
	}
	for _, f := range vec {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, &core.BreadError{Code: core.CodeStoreError, Message: "postgres store: embedding " + what + ": Options.Embed returned a NaN or infinite component"}
		}
	}
	return vec, nil
}

// pgMessage is the server's message of err, or err's text.
func pgMessage(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "ERROR: "); i >= 0 {
		msg = msg[i+len("ERROR: "):]
	}
	return msg
}
