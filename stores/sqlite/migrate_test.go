package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/internal/bunstore/bunstoretest"
	"github.com/breadai/bread/stores/sqlite"
)

// TestMigrateUpgradesAnEarlierDatabase: a database created before the
// checkpoint claim columns existed, and before the migration history, gets
// them from the baseline, keeps its rows, and claims work on it.
func TestMigrateUpgradesAnEarlierDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bread.db")
	old := openStore(t, sqlite.Options{Path: path})
	ctx := t.Context()
	if _, err := old.CreateSession(ctx, core.NewSession{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	cp := core.CheckpointRecord{ID: "cp", AgentID: "a", RunID: "r", SessionID: "s", ToolName: "human_ok", ToolCallID: "call", CreatedAt: 1}
	if err := old.SaveCheckpoint(ctx, cp); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		"ALTER TABLE bread_checkpoints DROP COLUMN claimed_by",
		"ALTER TABLE bread_checkpoints DROP COLUMN claimed_until",
		"DROP TABLE bread_migrations",
	} {
		if _, err := old.DB().ExecContext(ctx, stmt); err != nil {
			t.Fatalf("making the earlier schema: %v", err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s := openStore(t, sqlite.Options{Path: path}) // migrates
	for range 2 {                                 // and again: Migrate is idempotent
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ClaimCheckpoint(ctx, "cp", "replica-a", 10, 20)
	if err != nil {
		t.Fatalf("claim on the upgraded database: %v", err)
	}
	if got.ToolName != "human_ok" || got.ClaimedBy != "replica-a" || got.ClaimedUntil != 20 {
		t.Errorf("claimed %+v", got)
	}
}

func TestMigrationHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bread.db")
	bunstoretest.MigrationHistory(t, func(t *testing.T) bunstoretest.Migrating {
		s, err := sqlite.New(sqlite.Options{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}
