package postgres_test

import (
	"testing"

	"github.com/breadai/bread/stores/internal/bunstore/bunstoretest"
	"github.com/breadai/bread/stores/postgres"
)

func TestFencedInsertsAtOnce(t *testing.T) {
	bunstoretest.FencedInsertsAtOnce(t, newStore(t, postgres.Options{}))
}
