package postgres_test

import (
	"database/sql"
	"testing"

	"github.com/breadai/bread/stores/internal/bunstore/bunstoretest"
	"github.com/breadai/bread/stores/postgres"
)

func TestRenewalsSkipLockedRows(t *testing.T) {
	url := freshSchemaURL(t)
	s, err := postgres.New(postgres.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bunstoretest.RenewalsSkipLockedRows(t, s, db)
}
