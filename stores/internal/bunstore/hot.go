package bunstore

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"

	"github.com/uptrace/bun"
)

// hot names a statement every short run executes, written with ?
// placeholders rather than through bun, which writes the arguments into
// the SQL text: with Features.PreparedWrites the committer prepares each
// once per connection and then only binds and steps it. On SQLite the
// parsing and planning that saves was a fifth of the store's CPU.
type hot int

const (
	hotInsertSession hot = iota
	hotTouchSession
	hotInsertMessage
	hotInsertCrumb
	hotPutRun
	hotCount
)

// hotSQL are the statements, in the placeholder syntax of SQLite; they are
// used with Features.PreparedWrites, and in PostgreSQL's syntax by a
// dialect that pipelines (prepstmts.go).
var hotSQL = [hotCount]string{
	hotInsertSession: `INSERT INTO "bread_sessions" ("id", "created_at", "updated_at", "agent_id", "tags", "owner") VALUES (?, ?, ?, ?, ?, ?)`,
	hotTouchSession:  `UPDATE "bread_sessions" SET "updated_at" = ? WHERE "id" = ?`,
	hotInsertMessage: `INSERT INTO "bread_session_messages" ("id", "session_id", "role", "content", "timestamp") VALUES (?, ?, ?, ?, ?)`,
	hotInsertCrumb:   `INSERT INTO "bread_crumbs" ("run_id", "seq", "session_id", "agent_id", "type", "crumb", "created_at") VALUES (?, ?, ?, ?, ?, ?, ?)`,
	hotPutRun: `INSERT INTO "bread_runs" ("id", "agent_id", "session_id", "pipeline_id", "started_by", "status", "owner", "lease_until", "checkpoint_id", "attempt", "error_code", "created_at", "updated_at", "fence") ` +
		`VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ` +
		`ON CONFLICT ("id") DO UPDATE SET "status" = EXCLUDED."status", "owner" = EXCLUDED."owner", "lease_until" = EXCLUDED."lease_until", ` +
		`"checkpoint_id" = EXCLUDED."checkpoint_id", "attempt" = EXCLUDED."attempt", "error_code" = EXCLUDED."error_code", "updated_at" = EXCLUDED."updated_at", "fence" = EXCLUDED."fence"`,
}

// prepared holds the hot statements prepared on the *sql.DB; database/sql
// prepares each again, once, on every connection a transaction uses it on.
// Only the committer's goroutine touches it, and Close after that
// goroutine has ended.
type prepared struct {
	stmts [hotCount]*sql.Stmt
	ready bool // every statement prepared
}

// execHot executes h with args in tx: prepared when the dialect allows and
// the statement prepared, else as text.
func (s *Store) execHot(ctx context.Context, tx bun.Tx, h hot, args ...any) (sql.Result, error) {
	if s.prepared == nil || s.prepared.stmts[h] == nil {
		return tx.Tx.ExecContext(ctx, hotSQL[h], args...)
	}
	return tx.Tx.StmtContext(ctx, s.prepared.stmts[h]).ExecContext(ctx, args...)
}

// prepare prepares the hot statements not prepared yet. It runs before a
// transaction begins: preparing takes a connection of the pool, and an
// in-memory SQLite database has only one. A statement whose table is not
// migrated yet does not prepare and is tried again next time.
func (p *prepared) prepare(ctx context.Context, db *sql.DB) {
	if p == nil || p.ready {
		return
	}
	ready := true
	for h, st := range p.stmts {
		if st != nil {
			continue
		}
		st, err := db.PrepareContext(ctx, hotSQL[h])
		if err != nil {
			ready = false
			continue
		}
		p.stmts[h] = st
	}
	p.ready = ready
}

// close releases the prepared statements.
func (p *prepared) close() {
	if p == nil {
		return
	}
	for i, st := range p.stmts {
		if st != nil {
			_ = st.Close()
			p.stmts[i] = nil
		}
	}
}

// nullString and nullInt are bun's nullzero for the hot statements.
func nullString(v string) any {
	if v == "" {
		return nil
	}
	return v
}

func nullInt(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}

// hotRead names a query every run makes, prepared like the hot statements
// (Features.PreparedWrites) but used by any goroutine: a *sql.Stmt of the
// *sql.DB is safe for concurrent use.
type hotRead int

const (
	readMaxCrumbSeq hotRead = iota
	readMessages
	hotReadCount
)

var hotReadSQL = [hotReadCount]string{
	readMaxCrumbSeq: `SELECT COALESCE(MAX("seq"), 0) FROM "bread_crumbs" WHERE "run_id" = ?`,
	readMessages:    `SELECT "id", "session_id", "role", "content", "timestamp" FROM "bread_session_messages" WHERE "session_id" = ? ORDER BY "seq" ASC`,
}

// readers holds the prepared hot queries, each prepared on first use.
type readers struct {
	mu    sync.Mutex
	stmts [hotReadCount]atomic.Pointer[sql.Stmt]
}

// stmt is h prepared, or nil when the dialect does not prepare or the query
// does not prepare yet (its table is not migrated): the caller then queries
// through bun.
func (s *Store) readStmt(ctx context.Context, h hotRead) *sql.Stmt {
	r := s.readers
	if r == nil {
		return nil
	}
	if st := r.stmts[h].Load(); st != nil {
		return st
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if st := r.stmts[h].Load(); st != nil {
		return st
	}
	st, err := s.db.DB.PrepareContext(ctx, hotReadSQL[h])
	if err != nil {
		return nil
	}
	r.stmts[h].Store(st)
	return st
}

func (r *readers) close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.stmts {
		if st := r.stmts[i].Swap(nil); st != nil {
			_ = st.Close()
		}
	}
}
