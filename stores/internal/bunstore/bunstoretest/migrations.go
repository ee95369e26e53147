package bunstoretest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"github.com/breadai/bread/core"
)

// Migrating is a store before Migrate, as MigrationHistory opens it.
type Migrating interface {
	core.Migrator
	DB() *bun.DB
	MigrationStatus(ctx context.Context) (migrate.MigrationSlice, error)
}

// MigrationHistory checks the migration history on one empty database:
// two replicas migrating at once both succeed and apply each step once;
// Migrate again changes nothing; a database that records a migration this
// release does not know is refused with STORE_SCHEMA_TOO_NEW before
// anything runs. open returns a new store on that database each call, not
// migrated, closed by the caller's cleanup.
func MigrationHistory(t *testing.T, open func(t *testing.T) Migrating) {
	ctx := t.Context()
	a, b := open(t), open(t)
	start := make(chan struct{})
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, s := range []Migrating{a, b} {
		wg.Go(func() {
			<-start
			errs[i] = s.Migrate(ctx)
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("two replicas migrating at once: %v", err)
	}
	first := appliedOnce(t, a)

	if err := b.Migrate(ctx); err != nil {
		t.Fatalf("Migrate again: %v", err)
	}
	if again := appliedOnce(t, b); again != first {
		t.Errorf("Migrate again changed the version table: %d rows, then %d", first, again)
	}

	// A database whose history is the baseline's successor alone: without
	// the refusal, Migrate would run the baseline and create bread_kg_edges
	// again.
	for _, stmt := range []string{
		"DELETE FROM bread_migrations",
		"INSERT INTO bread_migrations (name, group_id) VALUES ('9999', 99)",
		"DROP TABLE bread_kg_edges",
	} {
		if _, err := a.DB().ExecContext(ctx, stmt); err != nil {
			t.Fatalf("making a database of a newer release: %s: %v", stmt, err)
		}
	}
	err := open(t).Migrate(ctx)
	var be *core.BreadError
	if !errors.As(err, &be) || be.Code != core.CodeStoreSchemaTooNew {
		t.Fatalf("Migrate on a database from a newer release: want STORE_SCHEMA_TOO_NEW, got %v", err)
	}
	t.Logf("refused: %v", err)
	var n int
	if err := a.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM bread_kg_edges").Scan(&n); err == nil {
		t.Error("the refused Migrate ran a migration (bread_kg_edges is back)")
	}
}

// appliedOnce checks every step of s's history is applied, once, and
// returns how many rows the version table holds.
func appliedOnce(t *testing.T, s Migrating) int {
	t.Helper()
	status, err := s.MigrationStatus(t.Context())
	if err != nil {
		t.Fatalf("MigrationStatus: %v", err)
	}
	for _, m := range status {
		if !m.IsApplied() {
			t.Errorf("migration %s is not applied", m)
		}
	}
	var rows int
	if err := s.DB().QueryRowContext(t.Context(), "SELECT COUNT(*) FROM bread_migrations").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != len(status) {
		t.Errorf("bread_migrations holds %d rows for %d migrations: a step ran twice", rows, len(status))
	}
	return rows
}
