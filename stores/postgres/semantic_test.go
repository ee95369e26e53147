package postgres_test

import (
	"context"
	"errors"
	"hash/fnv"
	"strings"
	"testing"
	"unicode"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/postgres"
)

// bagOfWords is a deterministic stand-in for an embedding model: each word
// adds one to a dimension chosen by its hash, so texts sharing words point
// the same way whatever their order or the words between them.
func bagOfWords(_ context.Context, text string) ([]float32, error) {
	vec := make([]float32, 64)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) }) {
		h := fnv.New32a()
		h.Write([]byte(w))
		vec[h.Sum32()%64]++
	}
	return vec, nil
}

func pgvectorAvailable(t *testing.T, s *postgres.Store) bool {
	var n int
	if err := s.DB().QueryRowContext(t.Context(), "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

func embeddingType(t *testing.T, s *postgres.Store, table string) string {
	var typ string
	err := s.DB().QueryRowContext(t.Context(),
		"SELECT t.typname::text FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid WHERE a.attrelid = to_regclass(?) AND a.attname = 'embedding'", table).Scan(&typ)
	if err != nil {
		t.Fatalf("embedding column of %s: %v", table, err)
	}
	return typ
}

// semanticCorpus fills a store and returns the document ids by name.
func semanticCorpus(t *testing.T, s *postgres.Store) map[string]string {
	ctx := t.Context()
	docs := map[string]string{}
	for _, d := range []core.NewDocument{
		{AgentID: "a", Title: "Feline care", Content: "How to brush a cat, and when to feed the cat."},
		{AgentID: "a", Title: "Canine care", Content: "How to walk a dog in the rain."},
		{AgentID: "a", Title: "Baking", Content: "Flour, water, salt and a sourdough starter."},
		{AgentID: "b", Title: "Other agent", Content: "brush the cat"},
	} {
		rec, err := s.IngestDocument(ctx, d)
		if err != nil {
			t.Fatalf("IngestDocument: %v", err)
		}
		docs[d.Title] = rec.ID
	}
	for _, label := range []string{"cat owner", "dog walker", "sourdough starter"} {
		if _, err := s.AddKnowledgeNode(ctx, core.NewKnowledgeNode{AgentID: "a", SessionID: "", Label: label}); err != nil {
			t.Fatalf("AddKnowledgeNode: %v", err)
		}
	}
	return docs
}

func titles(recs []core.DocumentRecord) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Title)
	}
	return out
}

func labels(nodes []core.KnowledgeNode) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Label)
	}
	return out
}

// Without pgvector, embeddings live in real[] columns and cosine similarity
// is computed in SQL. Semantic search finds what keyword search cannot: the
// words of the query in another order, with other words between them.
func TestSemanticSearchArrayFallback(t *testing.T) {
	for _, mode := range []postgres.VectorMode{postgres.VectorArray, postgres.VectorAuto} {
		t.Run(mode.String(), func(t *testing.T) {
			semantic := newStore(t, postgres.Options{Embed: bagOfWords, Vectors: mode})
			if mode == postgres.VectorAuto && pgvectorAvailable(t, semantic) {
				t.Skip("pgvector is installed on this server, so VectorAuto does not fall back; VectorArray covers the fallback")
			}
			for _, table := range []string{"bread_documents", "bread_kg_nodes"} {
				if typ := embeddingType(t, semantic, table); typ != "_float4" {
					t.Fatalf("%s.embedding is %s, want real[] (_float4)", table, typ)
				}
			}
			keyword := newStore(t, postgres.Options{})
			semanticCorpus(t, semantic)
			semanticCorpus(t, keyword)
			ctx := t.Context()

			const query = "cat brush"
			kw, err := keyword.SearchDocuments(ctx, core.DocumentQuery{AgentID: "a", Query: query})
			if err != nil {
				t.Fatal(err)
			}
			if len(kw) != 0 {
				t.Fatalf("keyword search for %q: want nothing (no text contains it), got %v", query, titles(kw))
			}
			sem, err := semantic.SearchDocuments(ctx, core.DocumentQuery{AgentID: "a", Query: query, Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			if got := titles(sem); len(got) != 2 || got[0] != "Feline care" {
				t.Fatalf("semantic search for %q: want Feline care first of 2, got %v", query, got)
			}
			sem, err = semantic.SearchDocuments(ctx, core.DocumentQuery{AgentID: "a", Query: "walk the dog"})
			if err != nil {
				t.Fatal(err)
			}
			if got := titles(sem); len(got) != 3 || got[0] != "Canine care" {
				t.Fatalf("semantic search for the dog: want Canine care first of the agent's 3, got %v", got)
			}

			kn, err := keyword.QueryKnowledge(ctx, core.KnowledgeQuery{AgentID: "a", Query: "owner of the cat"})
			if err != nil || len(kn) != 0 {
				t.Fatalf("keyword knowledge query: want nothing, got %v, %v", labels(kn), err)
			}
			sn, err := semantic.QueryKnowledge(ctx, core.KnowledgeQuery{AgentID: "a", Query: "owner of the cat", Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := labels(sn); len(got) != 1 || got[0] != "cat owner" {
				t.Fatalf("semantic knowledge query: want [cat owner], got %v", got)
			}
			// An empty query lists the newest, as keyword search does.
			all, err := semantic.QueryKnowledge(ctx, core.KnowledgeQuery{AgentID: "a"})
			if err != nil || len(all) != 3 || all[0].Label != "sourdough starter" {
				t.Fatalf("empty semantic query: want the 3 nodes newest first, got %v, %v", labels(all), err)
			}
		})
	}
}

// A failing embedder fails the write, which then writes nothing.
func TestEmbedFailure(t *testing.T) {
	boom := errors.New("embedding service down")
	s := newStore(t, postgres.Options{Vectors: postgres.VectorArray, Embed: func(ctx context.Context, text string) ([]float32, error) {
		if text == "fail" {
			return nil, boom
		}
		return bagOfWords(ctx, text)
	}})
	_, err := s.IngestDocument(t.Context(), core.NewDocument{AgentID: "a", Title: "t", Content: "fail"})
	if !errors.Is(err, boom) {
		t.Fatalf("want the embedder's error, got %v", err)
	}
	docs, err := s.SearchDocuments(t.Context(), core.DocumentQuery{AgentID: "a"})
	if err != nil || len(docs) != 0 {
		t.Fatalf("a failed ingest left %v (%v)", docs, err)
	}
}

// VectorPgvector refuses to fall back. This server may not have pgvector;
// when it does, the pgvector path is exercised instead.
func TestPgvector(t *testing.T) {
	probe := newStore(t, postgres.Options{})
	if !pgvectorAvailable(t, probe) {
		s, err := postgres.New(postgres.Options{URL: freshSchemaURL(t), Embed: bagOfWords, Vectors: postgres.VectorPgvector})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		err = s.Migrate(t.Context())
		if err == nil || !strings.Contains(err.Error(), "vector extension cannot be enabled") {
			t.Fatalf("Migrate with VectorPgvector and no pgvector: want a clear error, got %v", err)
		}
		t.Skip("pgvector is not installed on this server: the pgvector path (vector column, <=> ordering) is not exercised here")
	}
	s := newStore(t, postgres.Options{Embed: bagOfWords, Vectors: postgres.VectorPgvector})
	if typ := embeddingType(t, s, "bread_documents"); typ != "vector" {
		t.Fatalf("bread_documents.embedding is %s, want vector", typ)
	}
	semanticCorpus(t, s)
	sem, err := s.SearchDocuments(t.Context(), core.DocumentQuery{AgentID: "a", Query: "cat brush", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := titles(sem); len(got) != 2 || got[0] != "Feline care" {
		t.Fatalf("pgvector search: want Feline care first of 2, got %v", got)
	}
}
