package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"
)

// fakePipeline runs statements named "ok", "fail" (fails), "together"
// (fails the transaction as a whole unless it runs alone) and "conflict"
// (fails with errConflict its first conflicts times), and records each
// call's statements.
type fakePipeline struct {
	mu        sync.Mutex
	calls     [][]string
	conflicts int
}

var (
	errStatement = errors.New("statement failed")
	errConflict  = errors.New("deadlock detected")
)

func (f *fakePipeline) Pipeline(_ context.Context, _ *sql.DB, stmts []Stmt, affected []int64) (int, error) {
	texts := make([]string, len(stmts))
	for i, st := range stmts {
		texts[i] = st.SQL
	}
	f.mu.Lock()
	f.calls = append(f.calls, texts)
	f.mu.Unlock()
	for i, q := range texts {
		switch {
		case q == "fail":
			return i, errStatement
		case q == "together" && len(stmts) > 1:
			return len(stmts), errors.New("commit failed")
		case q == "conflict" && f.conflicts > 0:
			f.conflicts--
			return i, errConflict
		}
		affected[i] = int64(len(q))
	}
	return -1, nil
}

func TestRunPipelinedAnswersEachWriteOnce(t *testing.T) {
	errCheck := errors.New("check refused")
	for _, tc := range []struct {
		name      string
		stmts     []string // one write each; "checked" has a check that refuses
		want      []error
		calls     string // the calls, statements joined by '+', calls by ' '
		conflicts int    // how many times "conflict" fails
	}{
		{"all commit together", []string{"ok", "ok", "ok"}, []error{nil, nil, nil}, "ok+ok+ok", 0},
		{"a failed write runs alone after the others", []string{"ok", "fail", "ok"}, []error{nil, errStatement, nil}, "ok+fail+ok ok+ok fail", 0},
		{"a failed transaction runs every write alone", []string{"together", "ok"}, []error{nil, nil}, "together+ok together ok", 0},
		{"a check judges its own write", []string{"ok", "checked"}, []error{nil, errCheck}, "ok+checked", 0},
		{"one write", []string{"fail"}, []error{errStatement}, "fail", 0},
		{"a write that met a conflict runs again", []string{"ok", "conflict", "ok"}, []error{nil, nil, nil}, "ok+conflict+ok ok+ok conflict conflict", 2},
		{"a write that keeps meeting conflicts fails after maxConflictRuns runs alone", []string{"ok", "conflict"}, []error{nil, errConflict},
			"ok+conflict ok" + strings.Repeat(" conflict", maxConflictRuns), 99},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakePipeline{conflicts: tc.conflicts}
			s := &Store{features: Features{Pipeline: fake}, d: fakeDialect{}}
			c := newCommitter(s, 1)
			s.commits = c
			batch := make([]*job, len(tc.stmts))
			for i, q := range tc.stmts {
				w := &textWrite{stmts: []Stmt{{SQL: q}}}
				if q == "checked" {
					w.check = func(affected []int64) error {
						if affected[0] != int64(len("checked")) {
							t.Errorf("check saw %v", affected)
						}
						return errCheck
					}
				}
				batch[i] = &job{ctx: context.Background(), text: w, fn: w.fn, done: make(chan struct{})}
				batch[i].state.Store(jobTaken)
			}
			if !c.pipelines(batch) {
				t.Fatal("a batch of text writes does not pipeline")
			}
			c.runPipelined(batch) // a second answer would close done twice and panic
			for i, j := range batch {
				select {
				case <-j.done:
				default:
					t.Fatalf("write %d not answered", i)
				}
				if !errors.Is(j.err, tc.want[i]) {
					t.Errorf("write %d: err %v, want %v", i, j.err, tc.want[i])
				}
			}
			var calls []string
			for _, c := range fake.calls {
				calls = append(calls, strings.Join(c, "+"))
			}
			if got := strings.Join(calls, " "); got != tc.calls {
				t.Errorf("calls %q, want %q", got, tc.calls)
			}
		})
	}
}
