package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/stdlib"
)

// pipeline sends the statements of a group-commit batch as one
// simple-protocol query: PostgreSQL runs the statements of one query in
// one implicit transaction, committed when the last succeeds and rolled
// back at the first error, and answers with one result per statement. A
// batch of writes is then one round trip and one commit, where BEGIN, a
// statement at a time and COMMIT were two round trips more than it has
// statements.
type pipeline struct{}

// Pipeline implements bunstore.Pipeliner.
func (pipeline) Pipeline(ctx context.Context, db *sql.DB, stmts []string, affected []int64) (failed int, err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return len(stmts), err
	}
	defer func() { _ = conn.Close() }()
	failed = len(stmts)
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("postgres store: the driver connection is a %T, not pgx's", dc)
		}
		pc := c.Conn().PgConn()
		var text strings.Builder
		n := 0
		for _, q := range stmts {
			n += len(q) + 2
		}
		text.Grow(n)
		for i, q := range stmts {
			if i > 0 {
				// The newline ends a trailing line comment, which would
				// otherwise swallow the separator.
				text.WriteString("\n;")
			}
			text.WriteString(q)
		}
		mrr := pc.Exec(ctx, text.String())
		i := 0
		for mrr.NextResult() {
			tag, rerr := mrr.ResultReader().Close()
			if rerr != nil {
				break
			}
			if i < len(affected) {
				affected[i] = tag.RowsAffected()
			}
			i++
		}
		if cerr := mrr.Close(); cerr != nil {
			// The statement after the last complete one failed; past the
			// last statement, the commit did.
			failed = min(i, len(stmts))
			if pc.IsClosed() {
				failed = len(stmts)
				return fmt.Errorf("%w: %w", driver.ErrBadConn, cerr)
			}
			return cerr
		}
		if i != len(stmts) {
			return fmt.Errorf("postgres store: %d results for %d statements", i, len(stmts))
		}
		failed = -1
		return nil
	})
	return failed, err
}
