package storetest

import (
	"fmt"
	"testing"

	"github.com/breadai/bread/core"
)

func documentCases() []testCase {
	return []testCase{
		{name: "ingest and read", needs: needsDocuments, run: testDocumentIngestRead},
		{name: "SearchDocuments matches title or content case-insensitively within the agent", needs: needsDocuments, run: testDocumentSearch},
		{name: "SearchDocuments has a default limit of 5", needs: needsDocuments, run: testDocumentLimit},
		{name: "another agent's document is ErrDocumentNotFound", needs: needsDocuments, run: testDocumentScope},
	}
}

// ingest stores a document or stops the case.
func ingest(t *testing.T, ds core.DocumentStore, d core.NewDocument) core.DocumentRecord {
	t.Helper()
	rec, err := ds.IngestDocument(t.Context(), d)
	noErr(t, err, "IngestDocument(%s)", d.Title)
	return rec
}

// searchTitles returns the titles SearchDocuments finds.
func searchTitles(t *testing.T, ds core.DocumentStore, q core.DocumentQuery) []string {
	t.Helper()
	docs, err := ds.SearchDocuments(t.Context(), q)
	noErr(t, err, "SearchDocuments(%+v)", q)
	return ids(docs, documentTitle)
}

func testDocumentIngestRead(t *testing.T, s core.BreadStore) {
	ds := capability[core.DocumentStore](t, s)
	content := "hello world\nsecond line — ünïcode 🍞\n" + bigPayload
	rec := ingest(t, ds, core.NewDocument{AgentID: "a", Title: "Notes", Content: content, Source: "file://notes.md"})
	if rec.ID == "" {
		t.Fatal("IngestDocument returned no id")
	}
	equal(t, "Title", "Notes", rec.Title)
	equal(t, "Source", "file://notes.md", rec.Source)
	doc, err := ds.ReadDocument(t.Context(), "a", rec.ID)
	noErr(t, err, "ReadDocument")
	equal(t, "read title", "Notes", doc.Title)
	equal(t, "read content", content, doc.Content)

	other := ingest(t, ds, core.NewDocument{AgentID: "a", Title: "No source", Content: "x"})
	if other.ID == rec.ID {
		t.Errorf("two documents share the id %q", rec.ID)
	}
	equal(t, "Source of a document without one", "", other.Source)
}

func testDocumentSearch(t *testing.T, s core.BreadStore) {
	ds := capability[core.DocumentStore](t, s)
	alpha := ingest(t, ds, core.NewDocument{AgentID: "a", Title: "Alpha", Content: "Hello World", Source: "src-alpha"})
	ingest(t, ds, core.NewDocument{AgentID: "a", Title: "Beta", Content: "goodbye moon"})
	ingest(t, ds, core.NewDocument{AgentID: "a", Title: "Hello again", Content: "titles count too"})
	ingest(t, ds, core.NewDocument{AgentID: "other", Title: "Gamma", Content: "hello world"})
	cases := []struct {
		q    core.DocumentQuery
		want []string
	}{
		{core.DocumentQuery{AgentID: "a", Query: "hello"}, []string{"Alpha", "Hello again"}},
		{core.DocumentQuery{AgentID: "a", Query: "WORLD"}, []string{"Alpha"}},
		{core.DocumentQuery{AgentID: "a", Query: "beta"}, []string{"Beta"}},
		{core.DocumentQuery{AgentID: "a", Query: "moon"}, []string{"Beta"}},
		{core.DocumentQuery{AgentID: "other", Query: "hello"}, []string{"Gamma"}},
		{core.DocumentQuery{AgentID: "a", Query: "gamma"}, nil},
		{core.DocumentQuery{AgentID: "nobody", Query: "hello"}, nil},
	}
	for _, c := range cases {
		sameSet(t, fmt.Sprintf("SearchDocuments(%+v)", c.q), c.want, searchTitles(t, ds, c.q))
	}
	docs, err := ds.SearchDocuments(t.Context(), core.DocumentQuery{AgentID: "a", Query: "world"})
	noErr(t, err, "SearchDocuments")
	if len(docs) != 1 {
		t.Fatalf("SearchDocuments(world): want 1, got %d", len(docs))
	}
	equal(t, "found id", alpha.ID, docs[0].ID)
	equal(t, "found source", "src-alpha", docs[0].Source)
}

func testDocumentLimit(t *testing.T, s core.BreadStore) {
	ds := capability[core.DocumentStore](t, s)
	for i := range 7 {
		ingest(t, ds, core.NewDocument{AgentID: "a", Title: fmt.Sprintf("report %d", i), Content: "quarterly numbers"})
	}
	equal(t, "SearchDocuments with the default limit", 5, len(searchTitles(t, ds, core.DocumentQuery{AgentID: "a", Query: "quarterly"})))
	equal(t, "SearchDocuments with limit 2", 2, len(searchTitles(t, ds, core.DocumentQuery{AgentID: "a", Query: "report", Limit: 2})))
	equal(t, "SearchDocuments with limit 20", 7, len(searchTitles(t, ds, core.DocumentQuery{AgentID: "a", Query: "REPORT", Limit: 20})))
}

func testDocumentScope(t *testing.T, s core.BreadStore) {
	ds := capability[core.DocumentStore](t, s)
	rec := ingest(t, ds, core.NewDocument{AgentID: "a", Title: "Private", Content: "secret"})
	_, err := ds.ReadDocument(t.Context(), "b", rec.ID)
	isErr(t, err, core.ErrDocumentNotFound, "ReadDocument of another agent's document")
	_, err = ds.ReadDocument(t.Context(), "a", "no-such-document")
	isErr(t, err, core.ErrDocumentNotFound, "ReadDocument of an unknown id")
	_, err = ds.ReadDocument(t.Context(), "a", rec.ID)
	noErr(t, err, "ReadDocument by its own agent")
}
