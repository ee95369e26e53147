package riverjobs

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivermigrate"
)

// migrate brings River's tables up to date. River's migrator takes no lock,
// so replicas starting together would race to create the same tables: on
// PostgreSQL a session advisory lock (per schema) lets one migrate while
// the others wait, then find nothing to do; SQLite has one writer at a
// time, and a migrator that loses the race to another retries (for up to
// sqliteMigrateBudget), reading the versions anew.
func migrate[TTx any](ctx context.Context, o Options, db *sql.DB, driver riverdriver.Driver[TTx]) error {
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: o.Logger, Schema: o.Schema})
	if err != nil {
		return fmt.Errorf("riverjobs: migrator: %w", err)
	}
	if o.Dialect == Postgres {
		conn, err := db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("riverjobs: migrate: %w", err)
		}
		defer conn.Close()
		key := migrationLockKey(o.Schema)
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
			return fmt.Errorf("riverjobs: migrate: lock: %w", err)
		}
		defer func() {
			// The lock is the session's: a connection returned to the pool
			// while holding it would keep it, so unlock on a live context.
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", key)
		}()
		if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			return fmt.Errorf("riverjobs: migrate: %w", err)
		}
		return nil
	}
	// A busy timeout does not cover a transaction that read and then
	// writes while another writes (SQLite answers SQLITE_BUSY at once), so
	// the losers retry with a growing pause, for as long as a slow machine
	// may need: the CI of a loaded machine saw five tries in half a second
	// fail.
	var last error
	pause := 50 * time.Millisecond
	deadline := time.Now().Add(sqliteMigrateBudget)
	for {
		if _, last = m.Migrate(ctx, rivermigrate.DirectionUp, nil); last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("riverjobs: migrate: %w", last)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("riverjobs: migrate: %w", ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// sqliteMigrateBudget is how long a SQLite migrator retries after losing
// the race to another.
const sqliteMigrateBudget = 30 * time.Second

func migrationLockKey(schema string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("bread/jobs/river migrate " + schema))
	return int64(h.Sum64())
}
