package bunstore

import (
	"strconv"
	"strings"
)

// The writes every run makes, as prepared statements for a dialect that
// pipelines (PostgreSQL, Features.Pipeline): SQL in $n placeholders and
// the values as arguments (Stmt.Args), which the Pipeliner prepares once
// per connection under the statement's name and then only binds and
// executes. Sent as bun's text with the values written in, each was
// parsed, analysed and planned again on every run: in a short run on
// PostgreSQL, pg_stat_statements put the planning alone at a quarter of
// the time the server spent in these statements, and writing the values
// (JSON payloads escaped into the text) was bun's share of the client's.
//
// Each is the statement of the same write that is not pipelined (hotSQL,
// addMessageSQL, addOwnMessageSQL, the guarded upsert of runWriteText),
// spelled with PostgreSQL's placeholders.
var (
	prepInsertSession = prepared1("bread_insert_session", hotSQL[hotInsertSession])
	prepInsertMessage = prepared1("bread_insert_message", hotSQL[hotInsertMessage])
	prepInsertCrumb   = prepared1("bread_insert_crumb", hotSQL[hotInsertCrumb])
	prepAddMessage    = prepared1("bread_add_message", addMessageSQL)
	prepAddOwnMessage = prepared1("bread_add_own_message", addOwnMessageSQL)
	prepAddOwnCrumb   = prepared1("bread_add_own_crumb", addOwnCrumbSQL)
	prepLockRun       = prepared1("bread_lock_run", "SELECT 1 FROM bread_runs WHERE id = ? FOR UPDATE")
	prepPutRun        = prepared1("bread_put_run", runUpsertSQL)
	// prepEndRun is prepPutRun changing nothing when the record was taken
	// from the owner (runTakenSQL's arguments follow the row's).
	prepEndRun = prepared1("bread_end_run", runUpsertSQL+" WHERE NOT ("+runTakenSQL+")")
)

// runUpsertSQL is hotSQL's run upsert with the table named run_row, as bun
// names it, which runTakenSQL reads.
var runUpsertSQL = strings.Replace(hotSQL[hotPutRun], `INSERT INTO "bread_runs" (`, `INSERT INTO "bread_runs" AS "run_row" (`, 1)

// preparedStmt is a statement the pipeline prepares once per connection.
type preparedStmt struct{ name, sql string }

// prepared1 is the statement q, written with ? placeholders, in $n ones.
func prepared1(name, q string) preparedStmt {
	var b strings.Builder
	n, quoted := 0, false
	for _, r := range q {
		switch {
		case r == '\'':
			quoted = !quoted
		case r == '?' && !quoted:
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return preparedStmt{name: name, sql: b.String()}
}

// with is the statement to run with args.
func (p preparedStmt) with(args ...any) Stmt {
	return Stmt{Name: p.name, SQL: p.sql, Args: args}
}
