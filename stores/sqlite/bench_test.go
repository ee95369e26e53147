package sqlite_test

import (
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/storetest"
	"github.com/breadai/bread/stores/sqlite"
)

// BenchmarkStore runs the shared store benchmarks on a WAL file, the
// production setup, and on an in-memory database.
func BenchmarkStore(b *testing.B) {
	b.Run("file", func(b *testing.B) {
		storetest.Bench(b, func(b *testing.B) core.BreadStore { return newFileStore(b) })
	})
	b.Run("memory", func(b *testing.B) {
		storetest.Bench(b, func(b *testing.B) core.BreadStore { return openStore(b, sqlite.Options{Path: sqlite.MemoryPath}) })
	})
}
