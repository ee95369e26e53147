package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/breadai/bread/stores/internal/bunstore"
)

// pipeline sends the statements of a group-commit batch in one pipeline of
// the extended protocol, closed by one Sync: PostgreSQL runs the
// statements before a Sync in one implicit transaction, committed when the
// last succeeds and rolled back at the first error (the server skips the
// rest), and answers with one result per statement. A batch of writes is
// then one round trip and one commit, where BEGIN, a statement at a time
// and COMMIT were two round trips more than it has statements.
//
// A named statement (bunstore.Stmt.Name) is prepared once per connection,
// the first time the connection runs it (pgx keeps the connection's
// prepared statements), and is then only bound and executed: the server
// neither parses nor plans it again. Its arguments go as text. A statement
// without a name goes as its text, parsed and planned each time.
type pipeline struct{}

// Pipeline implements bunstore.Pipeliner.
func (pipeline) Pipeline(ctx context.Context, db *sql.DB, stmts []bunstore.Stmt, affected []int64) (failed int, err error) {
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
		pc := c.Conn()
		batch := &pgconn.Batch{}
		var args textArgs
		for _, st := range stmts {
			if st.Name == "" {
				batch.ExecParams(st.SQL, nil, nil, nil, nil)
				continue
			}
			// Once per connection; later a lookup.
			if _, err := pc.Prepare(ctx, st.Name, st.SQL); err != nil {
				if pc.PgConn().IsClosed() {
					return fmt.Errorf("%w: %w", driver.ErrBadConn, err)
				}
				return err
			}
			params, err := args.encode(st.Args)
			if err != nil {
				return err
			}
			batch.ExecPrepared(st.Name, params, nil, nil)
		}
		mrr := pc.PgConn().ExecBatch(ctx, batch)
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
			if pc.PgConn().IsClosed() {
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

// textArgs writes a statement's arguments in PostgreSQL's text format into
// buffers it reuses for the next statement: the batch's Bind message copies
// them as it is appended, so a batch allocates its parameters once, not a
// copy of every string (the JSON payloads) and integer of every statement.
type textArgs struct {
	params [][]byte
	bytes  []byte
}

// encode returns args in the text format: a string as it is, an integer
// in decimal, nil as NULL. The result is valid until the next call.
func (t *textArgs) encode(args []any) ([][]byte, error) {
	n := 0
	for _, a := range args {
		if v, ok := a.(string); ok {
			n += len(v)
		} else {
			n += 20
		}
	}
	if cap(t.bytes) < n {
		t.bytes = make([]byte, 0, max(n, 2*cap(t.bytes)))
	}
	if cap(t.params) < len(args) {
		t.params = make([][]byte, len(args), max(len(args), 16))
	}
	b, params := t.bytes[:0], t.params[:len(args)]
	for i, a := range args {
		start := len(b)
		switch v := a.(type) {
		case nil:
			params[i] = nil
			continue
		case string:
			b = append(b, v...)
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		default:
			return nil, fmt.Errorf("postgres store: a prepared statement's argument is a %T", a)
		}
		params[i] = b[start:len(b):len(b)]
	}
	t.bytes = b
	return params, nil
}
