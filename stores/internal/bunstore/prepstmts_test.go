package bunstore

import (
	"strings"
	"testing"
)

func TestPrepared1NumbersPlaceholders(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT 1 FROM t WHERE id = ?", "SELECT 1 FROM t WHERE id = $1"},
		{"INSERT INTO t (a, b) VALUES (?, ?)", "INSERT INTO t (a, b) VALUES ($1, $2)"},
		{"UPDATE t SET a = ? WHERE b <> '?' AND c = ?", "UPDATE t SET a = $1 WHERE b <> '?' AND c = $2"},
		{"SELECT COALESCE(x, '') <> '' AND y = ?", "SELECT COALESCE(x, '') <> '' AND y = $1"},
	} {
		if got := prepared1("n", tc.in).sql; got != tc.want {
			t.Errorf("prepared1(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// The fence check takes the token, then the run's id.
	if got, want := prepFence.sql, "SELECT CAST(CASE WHEN COALESCE(fence, '') = $1 THEN '1' ELSE '"+fenceTaken+" ' || COALESCE(fence, '') END AS INTEGER) FROM bread_runs WHERE id = $2 FOR SHARE"; got != want {
		t.Errorf("prepFence = %q, want %q", got, want)
	}
	// The guarded end upsert numbers runTakenSQL's arguments after the row's.
	if got, want := prepEndRun.sql[len(prepEndRun.sql)-1], byte(')'); got != want {
		t.Fatalf("prepEndRun ends with %q", got)
	}
	for _, p := range []string{"$14", "$15", "$16", "$17"} {
		if !strings.Contains(prepEndRun.sql, p) {
			t.Errorf("prepEndRun has no %s: %s", p, prepEndRun.sql)
		}
	}
	if strings.Contains(prepEndRun.sql, "$18") || strings.Contains(prepEndRun.sql, "?") {
		t.Errorf("prepEndRun: %s", prepEndRun.sql)
	}
}

func TestFencedRunStatementsNumberTheTokenLast(t *testing.T) {
	for _, tc := range []struct {
		p    preparedStmt
		want []string
		not  string
	}{
		{prepFenceLockRun, []string{"= $1 THEN '1'", "run_row.id = $2 FOR UPDATE"}, "$3"},
		{prepPutRunFenced, []string{"$14)", `"fence" = CASE WHEN COALESCE(run_row.fence, '') = $15 THEN EXCLUDED."fence" ELSE CAST(CAST('` + fenceTaken}, "$16"},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.p.sql, w) {
				t.Errorf("%s has no %q: %s", tc.p.name, w, tc.p.sql)
			}
		}
		if strings.Contains(tc.p.sql, tc.not) || strings.Contains(tc.p.sql, "?") {
			t.Errorf("%s: %s", tc.p.name, tc.p.sql)
		}
	}
}
