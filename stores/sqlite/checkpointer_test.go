package sqlite_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/sqlite"
)

// With SQLite's automatic checkpoint off, the Store's checkpointer still
// copies committed pages from the WAL into the database file, and a store
// that is never used creates no file.
func TestBackgroundCheckpoint(t *testing.T) {
	dir := t.TempDir()
	unused, err := sqlite.New(sqlite.Options{Path: filepath.Join(dir, "unused.db"), CheckpointInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "bread.db")
	s, err := sqlite.New(sqlite.Options{Path: path, CheckpointInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	deadline := time.Now().Add(5 * time.Second)
	for size() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	before := size()
	for i := range 200 {
		if _, err := s.CreateSession(t.Context(), core.NewSession{ID: fmt.Sprintf("s-%d", i), Tags: map[string]string{"pad": fmt.Sprintf("%0200d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	for size() <= before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if size() <= before {
		t.Fatalf("the database file stayed at %d bytes: nothing was checkpointed", before)
	}
	time.Sleep(30 * time.Millisecond)
	if err := unused.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "unused.db")); !os.IsNotExist(err) {
		t.Fatalf("an unused store created its file: %v", err)
	}
}
