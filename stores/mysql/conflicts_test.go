package mysql_test

import (
	"testing"

	"github.com/breadai/bread/stores/internal/bunstore/bunstoretest"
	"github.com/breadai/bread/stores/mysql"
)

func TestFencedInsertsAtOnce(t *testing.T) {
	bunstoretest.FencedInsertsAtOnce(t, newStore(t, mysql.Options{}))
}
