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

// WriteRun implements core.RunWriter: the session, the messages and the
// run record of w go to the committer as one write, so they share one
// transaction and one commit (and, where the dialect pipelines, one round
// trip) instead of one each. An owner's end (w.Owner) first locks the
// run's record and writes nothing when it was taken (EndRun's condition).
func (s *Store) WriteRun(ctx context.Context, w core.RunWrite) (bool, error) {
	if hasNUL(w.SessionID) {
		return false, sessionFK(w.SessionID)
	}
	if err := s.checkText("a run owner", w.Owner); err != nil {
		return false, err
	}
	var sess *sessionRow
	if n := w.Session; n != nil {
		if n.ID == "" || n.ID != w.SessionID {
			return false, s.errs.validation("a run write creates its session under its session id, which must be set")
		}
		if err := s.checkText("a session id, agent id or owner", n.ID, n.AgentID, n.Owner); err != nil {
			return false, err
		}
		if err := s.checkTags(n.Tags); err != nil {
			return false, err
		}
		tags, err := s.marshalTags(n.Tags)
		if err != nil {
			return false, err
		}
		now := core.NowMillis()
		sess = &sessionRow{ID: n.ID, CreatedAt: now, UpdatedAt: now, AgentID: n.AgentID, Tags: tags, Owner: n.Owner}
	}
	msgs, err := s.messageRows(w.SessionID, w.Messages)
	if err != nil {
		return false, err
	}
	crumbs := make([]crumbRow, len(w.Crumbs))
	for i, e := range w.Crumbs {
		if crumbs[i], err = newCrumbRow(s.errs, e); err != nil {
			return false, err
		}
	}
	var run *runRow
	owner := ""
	if w.Run != nil {
		if run, err = s.runRow(*w.Run); err != nil {
			return false, err
		}
		owner = w.Owner
	}
	var taken bool
	if s.features.Pipeline != nil && s.features.WritableCTEs {
		f, fenced, err := runFence(ctx)
		if err != nil {
			return false, err
		}
		tw := s.runWriteText(w.SessionID, sess, msgs, run, crumbs, owner, &taken)
		if fenced {
			foldFence(f, tw)
		}
		if err := s.writeText(ctx, "write run", sessionFK(w.SessionID), tw); err != nil {
			return false, err
		}
		return !taken, nil
	}
	err = s.write(ctx, "write run", sessionFK(w.SessionID), func(ctx context.Context, tx bun.Tx) error {
		taken = false
		if owner != "" {
			var cur runRow
			q := tx.NewSelect().Model(&cur).Column("status", "owner").Where("id = ?", run.ID)
			if s.db.Dialect().Name() != dialect.SQLite {
				// SQLite has one writer at a time; the others lock the row
				// until the commit, so no LoseRun comes in between.
				q = q.For("UPDATE")
			}
			switch err := q.Scan(ctx); {
			case err == nil:
				if taken = runTaken(cur.Status, cur.Owner, owner); taken {
					return nil
				}
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
		}
		if sess != nil {
			if err := sess.insert(s)(ctx, tx); err != nil {
				return err
			}
		}
		if len(msgs) > 0 {
			if sess == nil {
				if err := s.touchSession(ctx, tx, w.SessionID); err != nil {
					return err
				}
			}
			if err := s.insertMessages(ctx, tx, msgs); err != nil {
				return err
			}
		}
		if run != nil {
			if err := run.put(s)(ctx, tx); err != nil {
				return err
			}
		}
		return s.insertCrumbs(ctx, tx, crumbs)
	})
	if err != nil {
		return false, err
	}
	return !taken, nil
}

// runWriteText is WriteRun as prepared statements, sent in one round trip:
// the session's INSERT, each message (a plain INSERT into the session just
// created, else addMessageSQL, which touches the session and inserts
// nothing when it is missing), the run's upsert and each crumb's INSERT. A
// missing session fails the run's upsert or a crumb's (their foreign
// keys), and without either the check reports it: then no statement
// changed a row.
//
// An owner's end (owner set) first locks the run's row (SELECT ... FOR
// UPDATE), then adds each message and crumb and upserts the record only
// when the record was not taken from owner; the row lock makes every
// condition see the same record. The upsert changing no row sets *taken:
// then no statement changed anything.
func (s *Store) runWriteText(sessionID string, sess *sessionRow, msgs []messageRow, run *runRow, crumbs []crumbRow, owner string, taken *bool) *textWrite {
	stmts := make([]Stmt, 0, 3+len(msgs)+len(crumbs))
	if owner != "" {
		stmts = append(stmts, prepLockRun.with(run.ID))
	}
	if sess != nil {
		stmts = append(stmts, sess.insertStmt())
	}
	first := len(stmts)
	now := core.NowMillis()
	for _, r := range msgs {
		switch {
		case owner != "":
			stmts = append(stmts, prepAddOwnMessage.with(now, sessionID, run.ID, string(core.RunLost), string(core.RunRunning), owner,
				r.ID, r.Role, string(r.Content), r.Timestamp))
		case sess != nil:
			// The session was created a moment ago with this write's
			// time: nothing to touch.
			stmts = append(stmts, prepInsertMessage.with(r.ID, sessionID, r.Role, string(r.Content), r.Timestamp))
		default:
			stmts = append(stmts, prepAddMessage.with(now, sessionID, r.ID, r.Role, string(r.Content), r.Timestamp))
		}
	}
	if owner != "" {
		// Before the record's upsert, which changes what their condition
		// reads.
		for i := range crumbs {
			stmts = append(stmts, prepAddOwnCrumb.with(append(crumbs[i].args(), run.ID, string(core.RunLost), string(core.RunRunning), owner)...))
		}
	}
	last := -1
	if run != nil {
		last = len(stmts)
		if owner != "" {
			stmts = append(stmts, prepEndRun.with(append(run.args(), string(core.RunLost), string(core.RunRunning), owner)...))
		} else {
			stmts = append(stmts, prepPutRun.with(run.args()...))
		}
	}
	if owner == "" {
		for i := range crumbs {
			stmts = append(stmts, crumbs[i].insertStmt())
		}
	}
	tw := &textWrite{stmts: stmts}
	tw.check = func(affected []int64) error {
		*taken = owner != "" && affected[last] == 0
		if len(msgs) > 0 && !*taken && affected[first] == 0 {
			return sessionFK(sessionID)
		}
		return nil
	}
	return tw
}

// foldFence has the statements of tw that lock its run's row check f as
// they lock it, instead of a prepFence before them (one statement fewer at
// each end of a run): an owner's end's prepLockRun becomes
// prepFenceLockRun, and a run's upsert without an owner (its start)
// prepPutRunFenced. A write with neither, or for another run, is left to
// fencedText.
func foldFence(f core.RunFence, tw *textWrite) {
	for i, st := range tw.stmts {
		switch {
		case st.Name == prepLockRun.name && st.Args[0] == f.RunID:
			tw.stmts[i] = prepFenceLockRun.with(f.Token, f.RunID)
		case st.Name == prepPutRun.name && st.Args[0] == f.RunID:
			tw.stmts[i] = prepPutRunFenced.with(append(st.Args, f.Token)...)
		default:
			continue
		}
		tw.fenced = true
		return
	}
}

// runTakenSQL is runTaken in SQL, over the run's row, with the lost and
// running statuses and the owner as its arguments.
const runTakenSQL = `run_row.status = ? OR (run_row.status = ? AND COALESCE(run_row.owner, '') <> '' AND run_row.owner <> ?)`

// addOwnMessageSQL is addMessageSQL for an owner's end: it inserts nothing
// when the run's record was taken from its owner (runTakenSQL).
const addOwnMessageSQL = `WITH touched AS (
  UPDATE bread_sessions SET updated_at = ? WHERE id = ?
  AND NOT EXISTS (SELECT 1 FROM bread_runs AS run_row WHERE run_row.id = ? AND (` + runTakenSQL + `))
  RETURNING id
)
INSERT INTO bread_session_messages (id, session_id, role, content, timestamp)
SELECT ?, id, ?, ?, ? FROM touched`

// addOwnCrumbSQL is hotInsertCrumb for an owner's end: it inserts nothing
// when the run's record was taken from its owner (runTakenSQL, after the
// run's id), so no crumb follows the RUN_LOST a sweeper logs.
var addOwnCrumbSQL = strings.Replace(hotSQL[hotInsertCrumb], "VALUES (?, ?, ?, ?, ?, ?, ?)",
	"SELECT ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM bread_runs AS run_row WHERE run_row.id = ? AND ("+runTakenSQL+"))", 1)

// insertMessages inserts rows, their session touched already.
func (s *Store) insertMessages(ctx context.Context, tx bun.Tx, rows []messageRow) error {
	if s.prepared != nil {
		for _, r := range rows {
			if _, err := s.execHot(ctx, tx, hotInsertMessage, r.ID, r.SessionID, r.Role, string(r.Content), r.Timestamp); err != nil {
				return err
			}
		}
		return nil
	}
	_, err := tx.NewInsert().Model(&rows).Exec(ctx)
	return err
}
