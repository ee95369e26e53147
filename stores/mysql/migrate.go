package mysql

import (
	"context"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
)

// lockTimeout bounds how long Migrate waits for another process's
// migration, in seconds; ctx may end it sooner.
const lockTimeout = 600

// MigrationLock runs fn on one connection holding a named lock
// (GET_LOCK), the name derived from the database's, so two processes
// migrating one database queue and two databases on one server do not. A
// process that dies holding it releases it with its connection. MySQL's
// DDL commits implicitly, so fn runs outside a transaction: each step of
// the history is recorded after it completes, and one interrupted half way
// runs again from its start (every step is written to allow that).
func (dialect) MigrationLock(ctx context.Context, db *bun.DB, fn func(ctx context.Context, db bun.IDB) error) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, conn.Close()) }()
	const name = "CONCAT('bread_migrate:', SHA1(DATABASE()))"
	var got *int64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK("+name+", ?)", lockTimeout).Scan(&got); err != nil {
		return err
	}
	if got == nil || *got != 1 {
		return fmt.Errorf("another process held the migration lock for %d s", lockTimeout)
	}
	defer func() {
		// Released on a context of its own: ctx may have ended.
		if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "DO RELEASE_LOCK("+name+")"); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}()
	return fn(ctx, conn)
}
