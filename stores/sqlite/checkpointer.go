package sqlite

import (
	"context"
	"database/sql"
	"log/slog"
	"os"
	"sync"
	"time"
)

// checkpointer copies the WAL into the database file every interval, off
// the write path: with SQLite's automatic checkpoint, the commit that
// crosses 1,000 WAL pages runs the checkpoint and its fsync while every
// other writer of the Store waits behind it. It is owned by the Store and
// stopped by Close; the last connection to close checkpoints what is left.
type checkpointer struct {
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

func startCheckpointer(db *sql.DB, path string, every time.Duration, log *slog.Logger) *checkpointer {
	c := &checkpointer{stop: make(chan struct{}), done: make(chan struct{})}
	go c.loop(db, path, every, log)
	return c
}

func (c *checkpointer) loop(db *sql.DB, path string, every time.Duration, log *slog.Logger) {
	defer close(c.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-c.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	t := time.NewTicker(every)
	defer t.Stop()
	warned := false
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			if _, err := os.Stat(path + "-wal"); err != nil {
				// No WAL yet (the Store opens the file on first use), or
				// nothing to copy.
				continue
			}
			// PASSIVE copies what no reader still needs and never waits for
			// a lock; what it leaves, the next tick copies.
			_, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
			switch {
			case err == nil:
				warned = false
			case ctx.Err() == nil && !warned:
				// Once until a checkpoint succeeds again, not every tick.
				warned = true
				log.Warn("sqlite store: checkpointing the WAL failed; the WAL grows until a checkpoint succeeds", "path", path, "error", err)
			}
		}
	}
}

// close stops the goroutine and waits for it.
func (c *checkpointer) close() {
	if c == nil {
		return
	}
	c.once.Do(func() { close(c.stop) })
	<-c.done
}
