package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/sqlite"
)

// Ping is the readiness probe's question: it answers while the store is
// open and says STORE_CLOSED after Close.
func TestPing(t *testing.T) {
	s, err := sqlite.New(sqlite.Options{Path: filepath.Join(t.TempDir(), "bread.db")})
	if err != nil {
		t.Fatal(err)
	}
	var p core.Pinger = s
	if err := p.Ping(t.Context()); err != nil {
		t.Fatalf("Ping on an open store: %v", err)
	}
	s.Close()
	if err := p.Ping(t.Context()); breadCode(err) != core.CodeStoreClosed {
		t.Fatalf("Ping after Close: want STORE_CLOSED, got %v", err)
	}
}
