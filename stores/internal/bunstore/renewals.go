package bunstore

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// renewUnlocked runs set, an UPDATE of table renewing the rows where
// selects (a lease, a claim), on those of the rows no other transaction
// holds locked at the moment, and returns how many it changed.
//
// A renewal touches every row of its owner in one statement, locking them
// in the order it finds them, while the committer's batches lock the same
// owner's rows in the order their writes arrived, several to a
// transaction: each could hold a row the other waits for, and the
// database then aborts one of them as deadlocked (seen on PostgreSQL with
// 1,000 background runs on three replicas: a renewal aborted twice in a
// row let the sweeper of another replica declare a running run lost). A
// renewal that skips a locked row never waits, so it is never part of such
// a cycle. What it skips is a row some write is changing right now; the
// next renewal, a third of a lease later, extends it. SQLite has one
// writer at a time and no row locks: there every row is renewed.
func (s *Store) renewUnlocked(ctx context.Context, update func(db bun.IDB) *bun.UpdateQuery, table, where string, args ...any) (int, error) {
	exec := func(q *bun.UpdateQuery) (int, error) {
		res, err := q.Exec(ctx)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		return int(n), err
	}
	switch s.db.Dialect().Name() {
	case dialect.PG:
		return exec(update(s.db).Where("id IN (SELECT id FROM "+table+" WHERE "+where+" FOR UPDATE SKIP LOCKED)", args...))
	case dialect.MySQL:
		// InnoDB's UPDATE locks every row it examines, whatever a
		// subquery skips: the rows are chosen and locked first, then
		// changed by their keys, in one transaction.
		var n int
		err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			var ids []string
			err := tx.NewRaw("SELECT id FROM "+table+" WHERE "+where+" FOR UPDATE SKIP LOCKED", args...).Scan(ctx, &ids)
			if err != nil || len(ids) == 0 {
				return err
			}
			n, err = exec(update(tx).Where("id IN (?)", bun.List(ids)))
			return err
		})
		return n, err
	default:
		return exec(update(s.db).Where(where, args...))
	}
}
