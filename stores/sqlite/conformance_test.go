package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/storetest"
	"github.com/breadai/bread/stores/sqlite"
)

// allFeatures is every optional capability: the store claims them all.
var allFeatures = storetest.Features{
	Runs: true, RunList: true, SessionStarters: true, MessageDelete: true, Loops: true, CrumbLog: true,
	TaskRuns: true, Knowledge: true, Documents: true, EvalRuns: true, Migrate: true, Ping: true, ClosedErrors: true, SessionState: true, RunSubscriptions: true,
}

// newFileStore opens a migrated store on a fresh file, closed at cleanup.
func newFileStore(tb testing.TB) *sqlite.Store {
	tb.Helper()
	return openStore(tb, sqlite.Options{Path: filepath.Join(tb.TempDir(), "bread.db")})
}

func openStore(tb testing.TB, o sqlite.Options) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.New(o)
	if err != nil {
		tb.Fatalf("sqlite.New: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(tb.Context()); err != nil {
		tb.Fatalf("Migrate: %v", err)
	}
	return s
}

func TestConformanceFile(t *testing.T) {
	storetest.Run(t, allFeatures, func(t *testing.T) core.BreadStore { return newFileStore(t) })
}

func TestConformanceMemory(t *testing.T) {
	storetest.Run(t, allFeatures, func(t *testing.T) core.BreadStore {
		return openStore(t, sqlite.Options{Path: sqlite.MemoryPath})
	})
}
