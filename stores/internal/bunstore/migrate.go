package bunstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"github.com/breadai/bread/core"
)

// VersionTable is the table that records the migrations a database has
// had, one row each: bun/migrate's layout (id, name, group_id,
// migrated_at), so bun's migrate.Migrator reads it too (MigrationStatus).
const VersionTable = "bread_migrations"

// Migration is one step of the migration history.
type Migration struct {
	// Version orders the history and is what VersionTable records: digits,
	// compared as strings, so every version has the same number of them.
	// A released version never changes.
	Version string
	// Comment says what the step does, in lower-case words and underscores.
	Comment string
	// Up applies the step through db, with schema the dialect's. On an
	// engine whose DDL commits implicitly (MySQL) a step interrupted half
	// way runs again from its start, so it must be safe to re-run.
	Up func(ctx context.Context, db bun.IDB, schema Schema) error
}

// history is the migration history of every SQL store, oldest first. To
// change the layout, change the definitions of tables.go and append a step
// that brings an existing database there; never edit a released one. The
// baseline builds a new database from tables.go, so every later step finds
// a new database in its target layout already and must leave it so (added
// tables, columns and indexes: an Up of createTables; anything else checks
// first). TestHistory checks the versions are ordered and well formed.
var history = []Migration{
	// The layout of the release before the history, reached from nothing
	// or from whatever that release (or an older one, or the TypeScript
	// bread on PostgreSQL) left: missing tables and indexes created,
	// columns an older table lacks added.
	{Version: "0001", Comment: "baseline", Up: createTables},
	// bread_sessions.owner, the identity that created a session (issue 29):
	// added, then set on the sessions already there from the starter of
	// their first run that recorded one, so a session keeps its owner
	// across the upgrade; a session no identified caller ran in keeps
	// none (the admins' only, under the ownership rule).
	{Version: "0002", Comment: "session_owner", Up: addSessionOwner},
	// bread_eval_runs, the eval history (issue 35): a new table, nothing
	// to carry over.
	{Version: "0003", Comment: "eval_runs", Up: createTables},
	// bread_session_state, a session's state document (issue 33): a new
	// table, created empty.
	{Version: "0004", Comment: "session_state", Up: createTables},
	// bread_runs.fence, the token of the attempt that holds a run
	// (core.RunFence, issue 31): a new column, NULL on the runs already
	// there (no attempt of theirs writes under a fence).
	{Version: "0005", Comment: "run_fence", Up: createTables},
	// bread_run_subscriptions, who asked to hear about a run (A2A push
	// notification configs, issue 33): a new table, created empty.
	{Version: "0006", Comment: "run_subscriptions", Up: createTables},
}

// addSessionOwner is migration 0002. Its UPDATE touches only sessions
// without an owner, so it is safe to re-run.
func addSessionOwner(ctx context.Context, db bun.IDB, schema Schema) error {
	if err := createTables(ctx, db, schema); err != nil {
		return err
	}
	_, err := db.ExecContext(ctx, `UPDATE bread_sessions SET owner = (
  SELECT r.started_by FROM bread_runs r
  WHERE r.session_id = bread_sessions.id AND r.started_by IS NOT NULL AND r.started_by <> ''
  ORDER BY r.created_at, r.id LIMIT 1)
WHERE owner IS NULL`)
	if err != nil {
		return fmt.Errorf("set the owners of existing sessions: %w", err)
	}
	return nil
}

// Migrate brings the database to the newest layout: it runs, in order, the
// steps of the history that VersionTable does not record yet, each once,
// and then the dialect's AfterMigrations. The dialect's MigrationLock
// serialises concurrent Migrates, also from other processes, and on
// SQLite and PostgreSQL makes the whole of it one transaction. A database
// that records a step this release does not know, migrated by a newer
// release, is refused with STORE_SCHEMA_TOO_NEW before anything runs.
// Migrate is idempotent.
func (s *Store) Migrate(ctx context.Context) error {
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if s.schemaErr != nil {
		return &core.BreadError{Code: core.CodeStoreError, Message: s.prefix + s.schemaErr.Error(), Cause: s.schemaErr}
	}
	var committed func()
	err = s.d.MigrationLock(ctx, s.db, func(ctx context.Context, db bun.IDB) error {
		if err := s.runHistory(ctx, db, history); err != nil {
			return err
		}
		var err error
		committed, err = s.d.AfterMigrations(ctx, db)
		return err
	})
	if err != nil {
		return s.mapErr("migrate", err, nil)
	}
	if committed != nil {
		committed()
	}
	return nil
}

// runHistory applies the steps of steps that db has not had.
func (s *Store) runHistory(ctx context.Context, db bun.IDB, steps []Migration) error {
	if _, err := db.NewCreateTable().Model((*migrate.Migration)(nil)).ModelTableExpr(VersionTable).IfNotExists().Exec(ctx); err != nil {
		return fmt.Errorf("create %s: %w", VersionTable, err)
	}
	applied, err := appliedMigrations(ctx, db)
	if err != nil {
		return err
	}
	if err := s.refuseUnknown(applied, steps); err != nil {
		return err
	}
	group := applied.LastGroupID() + 1
	for _, step := range steps {
		if slices.ContainsFunc(applied, func(m migrate.Migration) bool { return m.Name == step.Version }) {
			continue
		}
		if err := step.Up(ctx, db, s.schema); err != nil {
			return fmt.Errorf("migration %s_%s: %w", step.Version, step.Comment, err)
		}
		row := &migrate.Migration{Name: step.Version, GroupID: group}
		if _, err := db.NewInsert().Model(row).ModelTableExpr(VersionTable).Exec(ctx); err != nil {
			return fmt.Errorf("record migration %s: %w", step.Version, err)
		}
	}
	return nil
}

// appliedMigrations reads VersionTable.
func appliedMigrations(ctx context.Context, db bun.IDB) (migrate.MigrationSlice, error) {
	var applied migrate.MigrationSlice
	if err := db.NewSelect().Model(&applied).ModelTableExpr(VersionTable).ColumnExpr("*").OrderExpr("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("read %s: %w", VersionTable, err)
	}
	return applied, nil
}

// refuseUnknown fails when applied records a version steps does not have.
func (s *Store) refuseUnknown(applied migrate.MigrationSlice, steps []Migration) error {
	var unknown []string
	for _, m := range applied {
		if !slices.ContainsFunc(steps, func(step Migration) bool { return step.Version == m.Name }) {
			unknown = append(unknown, m.Name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	return &core.BreadError{
		Code: core.CodeStoreSchemaTooNew,
		Message: fmt.Sprintf("%sthe database was migrated by a newer release of bread: %s records migration %s, which this release does not know (it knows up to %s); "+
			"refusing to use it: run the newer release, or restore the backup taken before the upgrade",
			s.prefix, VersionTable, strings.Join(unknown, ", "), steps[len(steps)-1].Version),
		Context: map[string]any{"unknownMigrations": unknown},
	}
}

// MigrationStatus lists the steps of the history, each with its ID,
// GroupID and MigratedAt from VersionTable when the database has had it:
// bun/migrate's own view of the table.
func (s *Store) MigrationStatus(ctx context.Context) (migrate.MigrationSlice, error) {
	if err := s.read(); err != nil {
		return nil, err
	}
	ms := migrate.NewMigrations()
	for _, step := range history {
		ms.Add(migrate.Migration{Name: step.Version, Comment: step.Comment})
	}
	status, err := migrate.NewMigrator(s.db, ms, migrate.WithTableName(VersionTable)).MigrationsWithStatus(ctx)
	if err != nil {
		return nil, s.mapErr("read the migration status", err, nil)
	}
	return status, nil
}
