package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/breadai/bread/core"
)

// Every write made with a context carrying a core.RunFence is conditioned
// on the run's record still holding the fence's token, in the write's own
// transaction: its first step locks the run's row and checks the token,
// so a LoseRun (or another attempt's take) is ordered before the whole
// write, which is then refused, or after it. A refused write is
// core.CodeRunTaken and changes nothing; the committer takes it out of its
// batch, as any failed write, so the others commit.
//
// On a dialect that pipelines (PostgreSQL) the check is one more prepared
// statement at the head of the write's statements, in the same round trip
// (prepFence): it fails, aborting the write's transaction, when the token
// differs. Elsewhere it is a SELECT ... FOR UPDATE (SQLite has one writer
// at a time: a plain SELECT) in the write's transaction.

// fenceTaken is the text prepFence fails on: casting it to an integer is
// the error, which a dialect without procedures raises from a row's value.
const fenceTaken = "bread_run_taken"

// fenceSQL locks the run's row, if there is one, and fails when it holds
// another token. The failing value is built from the row, so the planner
// cannot fold the cast into an error of every execution.
const fenceSQL = `SELECT CAST(CASE WHEN COALESCE(fence, '') = ? THEN '1' ELSE '` + fenceTaken + ` ' || COALESCE(fence, '') END AS INTEGER) FROM bread_runs WHERE id = ? FOR SHARE`

var prepFence = prepared1("bread_fence", fenceSQL)

// fenceValueSQL is the fence check as a text value of a statement that
// locks the run's row itself (run_row): then when the row holds the token
// (the placeholder), else a failing cast, built from the row so the
// planner cannot fold it into an error of every execution.
func fenceValueSQL(then string) string {
	return `CASE WHEN COALESCE(run_row.fence, '') = ? THEN ` + then +
		` ELSE CAST(CAST('` + fenceTaken + ` ' || COALESCE(run_row.fence, '') AS INTEGER) AS TEXT) END`
}

// The fence folded into statements a run's writes make anyway (issue 32:
// one statement fewer at each end of a run). prepFenceLockRun is
// prepLockRun checking the token as it locks the row (FOR UPDATE, the
// stronger of prepFence's and prepLockRun's locks), the token first and
// the run's id second. prepPutRunFenced is prepPutRun whose update of an
// existing row fails, as prepFence does, when the row holds another token
// (the token after the row's values); a missing row is inserted, as
// prepFence admits it. Either holds the row's lock until the commit, as
// prepFence did: a LoseRun is ordered before the whole write or after it.
var (
	prepFenceLockRun = prepared1("bread_fence_lock_run", `SELECT `+fenceValueSQL("'1'")+` FROM bread_runs AS run_row WHERE run_row.id = ? FOR UPDATE`)
	prepPutRunFenced = prepared1("bread_put_run_fenced", strings.Replace(runUpsertSQL,
		`"fence" = EXCLUDED."fence"`, `"fence" = `+fenceValueSQL(`EXCLUDED."fence"`), 1))
)

// runFence returns the fence of ctx, if any. A token or id with a NUL byte
// no record holds, so it is refused at once.
func runFence(ctx context.Context) (core.RunFence, bool, error) {
	f, ok := core.RunFenceFrom(ctx)
	if !ok {
		return f, false, nil
	}
	if hasNUL(f.RunID) || hasNUL(f.Token) {
		return f, true, f.Taken()
	}
	return f, true, nil
}

// fenced is fn preceded by the check of f in the same transaction.
func (s *Store) fenced(f core.RunFence, fn func(ctx context.Context, tx bun.Tx) error) func(ctx context.Context, tx bun.Tx) error {
	q := "SELECT fence FROM bread_runs WHERE id = ?"
	if s.db.Dialect().Name() != dialect.SQLite {
		q += " FOR UPDATE"
	}
	return func(ctx context.Context, tx bun.Tx) error {
		// Plain SQL rather than a model query: it runs on every fenced
		// write, and building the query was most of its cost on SQLite.
		var cur sql.NullString
		switch err := tx.QueryRowContext(ctx, q, f.RunID).Scan(&cur); {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		case !f.Admits(cur.String, true):
			return f.Taken()
		}
		return fn(ctx, tx)
	}
}

// fencedText is w preceded by prepFence, unless w checks the fence itself.
func fencedText(f core.RunFence, w *textWrite) *textWrite {
	if w.fenced {
		return w
	}
	stmts := make([]Stmt, 0, len(w.stmts)+1)
	stmts = append(stmts, prepFence.with(f.Token, f.RunID))
	stmts = append(stmts, w.stmts...)
	out := &textWrite{stmts: stmts}
	if check := w.check; check != nil {
		out.check = func(affected []int64) error { return check(affected[1:]) }
	}
	return out
}

// fenceRefused reports whether err is prepFence's failure.
func fenceRefused(err error) bool {
	return err != nil && strings.Contains(err.Error(), fenceTaken)
}
