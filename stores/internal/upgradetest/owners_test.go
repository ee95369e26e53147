package upgradetest

import (
	"context"
	"database/sql"
	"testing"

	"github.com/breadai/bread/core"
)

// v0Starters adds to a v0 database, in its own layout, what a v0 server
// with auth left: runs that recorded their starter (bread_runs.started_by
// existed before the history; the session owner column did not). Migration
// 0002 must give each session the starter of its first run that recorded
// one.
const v0Starters = `
UPDATE bread_runs SET started_by = '"jwt" "" "alice"' WHERE session_id = 'session-v0' AND status = 'suspended';
INSERT INTO bread_sessions (id, created_at, updated_at, agent_id) VALUES ('session-two', 100, 300, 'publisher');
INSERT INTO bread_runs (id, agent_id, session_id, started_by, status, created_at, updated_at) VALUES ('run-carol', 'publisher', 'session-two', '"jwt" "" "carol"', 'completed', 200, 210);
INSERT INTO bread_runs (id, agent_id, session_id, started_by, status, created_at, updated_at) VALUES ('run-bob', 'publisher', 'session-two', '"jwt" "" "bob"', 'completed', 100, 110);
INSERT INTO bread_sessions (id, created_at, updated_at, agent_id) VALUES ('session-anon', 100, 100, 'publisher');
INSERT INTO bread_runs (id, agent_id, session_id, started_by, status, created_at, updated_at) VALUES ('run-anon', 'publisher', 'session-anon', '', 'completed', 100, 110);
INSERT INTO bread_sessions (id, created_at, updated_at, agent_id) VALUES ('session-norun', 100, 100, 'publisher');
`

// addStarters runs v0Starters on a database loaded from a v0 fixture.
func addStarters(t *testing.T, db *sql.DB) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), v0Starters); err != nil {
		t.Fatalf("adding the starters to the v0 database: %v", err)
	}
}

// checkOwnersFilled reads, after the upgrade, the owner migration 0002 gave
// each session: the starter of its first run that recorded one (a run
// without a starter is skipped), none for a session no identified caller
// ran in.
func checkOwnersFilled(t *testing.T, store *core.Storage) {
	t.Helper()
	ctx := context.Background()
	for id, want := range map[string]string{
		"session-v0":    `"jwt" "" "alice"`,
		"session-two":   `"jwt" "" "bob"`,
		"session-anon":  "",
		"session-norun": "",
	} {
		s, err := store.GetSession(ctx, id)
		if err != nil {
			t.Errorf("session %s after the upgrade: %v", id, err)
			continue
		}
		if s.Owner != want {
			t.Errorf("session %s: owner %q after the upgrade, want %q", id, s.Owner, want)
		}
	}
}
