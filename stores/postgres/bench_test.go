package postgres_test

import (
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/storetest"
	"github.com/breadai/bread/stores/postgres"
)

// BenchmarkStore runs the shared store benchmarks against the test server,
// each on a fresh schema.
func BenchmarkStore(b *testing.B) {
	serverURL(b)
	storetest.Bench(b, func(b *testing.B) core.BreadStore { return newStore(b, postgres.Options{}) })
}
