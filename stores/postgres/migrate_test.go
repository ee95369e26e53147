package postgres_test

import (
	"testing"

	"github.com/breadai/bread/stores/internal/bunstore/bunstoretest"
	"github.com/breadai/bread/stores/postgres"
)

func TestMigrationHistory(t *testing.T) {
	url := freshSchemaURL(t)
	bunstoretest.MigrationHistory(t, func(t *testing.T) bunstoretest.Migrating {
		s, err := postgres.New(postgres.Options{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}
