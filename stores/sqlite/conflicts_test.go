package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/breadai/bread/stores/internal/bunstore/bunstoretest"
	"github.com/breadai/bread/stores/sqlite"
)

func TestFencedInsertsAtOnce(t *testing.T) {
	bunstoretest.FencedInsertsAtOnce(t, openStore(t, sqlite.Options{Path: filepath.Join(t.TempDir(), "bread.db")}))
}
