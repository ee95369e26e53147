package postgres_test

import (
	"testing"

	"github.com/breadai/bread/stores/internal/bunstore/bunstoretest"
	"github.com/breadai/bread/stores/postgres"
)

// TestPayloadBytesExact checks what storetest compares after compaction:
// every json.RawMessage comes back with the very bytes that went in.
func TestPayloadBytesExact(t *testing.T) {
	bunstoretest.PayloadBytesExact(t, newStore(t, postgres.Options{}))
}
