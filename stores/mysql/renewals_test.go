package mysql_test

import (
	"database/sql"
	"testing"

	"github.com/breadai/bread/stores/internal/bunstore/bunstoretest"
	"github.com/breadai/bread/stores/mysql"
)

func TestRenewalsSkipLockedRows(t *testing.T) {
	url := freshDatabaseURL(t)
	s, err := mysql.New(mysql.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bunstoretest.RenewalsSkipLockedRows(t, s, db)
}
