package upgradetest

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/stores/postgres"
	"github.com/breadai/bread/stores/sqlite"
	"github.com/breadai/bread/stores/teststores"
)

// upgraded is a store on a database loaded from a v0 fixture, and what
// reads its layout.
type upgraded struct {
	store  core.BreadStore
	layout func(t *testing.T) map[string]string
}

// TestUpgradeFromV0 loads a database as the release before the migration
// history left it, with a run suspended for a human in it; an engine on the
// current store migrates it at Start and resumes that run to its end. The
// rows are all there, and the layout is the one a new database gets.
func TestUpgradeFromV0(t *testing.T) {
	for name, open := range map[string]func(t *testing.T, fixture string) (old, fresh upgraded){
		"sqlite":   openSQLite,
		"postgres": openPostgres,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fixture, err := os.ReadFile(filepath.Join("testdata", name, "v0.sql"))
			if err != nil {
				t.Fatal(err)
			}
			old, fresh := open(t, string(fixture))
			resumeAfterUpgrade(t, old.store)
			checkOwnersFilled(t, core.NewStorage(old.store))
			if err := core.NewStorage(fresh.store).Migrate(t.Context()); err != nil {
				t.Fatal(err)
			}
			got, want := old.layout(t), fresh.layout(t)
			if len(want) < 100 {
				t.Fatalf("the layout of a new database reads as %d columns, indexes and constraints: %v", len(want), want)
			}
			if !reflect.DeepEqual(got, want) {
				for k := range want {
					if got[k] != want[k] {
						t.Errorf("%s\n upgraded: %s\n      new: %s", k, got[k], want[k])
					}
				}
				for k := range got {
					if _, ok := want[k]; !ok {
						t.Errorf("%s only in the upgraded database: %s", k, got[k])
					}
				}
			}
		})
	}
}

func resumeAfterUpgrade(t *testing.T, raw core.BreadStore) {
	ctx := t.Context()
	store := core.NewStorage(raw)
	in := startEngine(t, store, modeltest.New(modeltest.Text("Published.")))

	cps, err := store.ListCheckpoints(ctx)
	if err != nil || len(cps) != 1 || cps[0].ToolName != humanTool {
		t.Fatalf("the pending checkpoint after the upgrade: %+v, %v", cps, err)
	}
	cp := cps[0]
	runs := store
	if rec, err := runs.GetRun(ctx, cp.RunID); err != nil || rec.Status != core.RunSuspended {
		t.Fatalf("the suspended run's record: %+v, %v", rec, err)
	}
	if msgs, err := store.GetMessages(ctx, "session-v0"); err != nil || len(msgs) != 4 {
		t.Fatalf("the session's messages: %d, %v", len(msgs), err)
	}
	before, err := store.GetCrumbs(ctx, cp.RunID, 0, 0)
	if err != nil || len(before) == 0 {
		t.Fatalf("the suspended run's crumb log: %v, %v", before, err)
	}

	cs, err := collect(in.Resume(ctx, cp.ID, map[string]any{"url": "https://bread.dev/v0"}))
	if err != nil {
		t.Fatalf("resume after the upgrade: %v", err)
	}
	end, ok := cs[len(cs)-1].(*core.AgentRunEnd)
	if !ok {
		t.Fatalf("the resumed run ended with %T", cs[len(cs)-1])
	}
	if fmt.Sprint(end.Output) != "Published." {
		t.Errorf("the resumed run's output %v", end.Output)
	}
	if rec, err := runs.GetRun(ctx, cp.RunID); err != nil || rec.Status != core.RunCompleted {
		t.Errorf("the resumed run's record: %+v, %v", rec, err)
	}
	after, err := store.GetCrumbs(ctx, cp.RunID, 0, 0)
	if err != nil || len(after) <= len(before) || after[len(after)-1].Crumb.CrumbType() != core.TypeAgentRunEnd {
		t.Errorf("the crumb log after the resume: %d entries, %v", len(after), err)
	}
	if msgs, err := store.GetMessages(ctx, "session-v0"); err != nil || len(msgs) != 6 {
		t.Errorf("the session after the resume: %d messages (want the answer and the reply added to 4), %v", len(msgs), err)
	}
	if cps, err := store.ListCheckpoints(ctx); err != nil || len(cps) != 0 {
		t.Errorf("checkpoints after the resume: %+v, %v", cps, err)
	}

	// The rows of the other tables read back through the new code.
	if d, err := store.GetLoop(ctx, "loop-v0"); err != nil || len(d.Iterations) != 1 || string(d.Iterations[0].Input) != `{"draft": 1}` {
		t.Errorf("the loop: %+v, %v", d, err)
	}
	if tr, err := store.GetTaskRun(ctx, "task-run-v0"); err != nil || tr.Status != core.TaskRunning {
		t.Errorf("the task run: %+v, %v", tr, err)
	}
	if nodes, err := store.QueryKnowledge(ctx, core.KnowledgeQuery{AgentID: agentID, Query: "bread"}); err != nil || len(nodes) != 1 || nodes[0].Data["kind"] != "food" {
		t.Errorf("the knowledge node: %+v, %v", nodes, err)
	}
	if docs, err := store.SearchDocuments(ctx, core.DocumentQuery{AgentID: agentID, Query: "first release"}); err != nil || len(docs) != 1 {
		t.Errorf("the document: %+v, %v", docs, err)
	}
	if outs, complete, err := store.SettleJoin(ctx, "join-v0", 2, 1, []byte(`"second"`)); err != nil || !complete || string(outs[0]) != `"first"` {
		t.Errorf("the join: %s, %v, %v", outs, complete, err)
	}
}

func openSQLite(t *testing.T, fixture string) (old, fresh upgraded) {
	dir := t.TempDir()
	oldPath, freshPath := filepath.Join(dir, "v0.db"), filepath.Join(dir, "new.db")
	db, err := sql.Open("sqlite", oldPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(t.Context(), fixture); err != nil {
		t.Fatalf("loading the v0 fixture: %v", err)
	}
	addStarters(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	open := func(path string) upgraded {
		s, err := sqlite.New(sqlite.Options{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return upgraded{store: s, layout: func(t *testing.T) map[string]string { return sqliteLayout(t, s.DB().DB) }}
	}
	return open(oldPath), open(freshPath)
}

func openPostgres(t *testing.T, fixture string) (old, fresh upgraded) {
	oldURL, freshURL := teststores.PostgresURL(t), teststores.PostgresURL(t)
	db, err := sql.Open("pgx", oldURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(t.Context(), fixture); err != nil {
		t.Fatalf("loading the v0 fixture: %v", err)
	}
	addStarters(t, db)
	open := func(url string) upgraded {
		s, err := postgres.New(postgres.Options{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return upgraded{store: s, layout: func(t *testing.T) map[string]string { return postgresLayout(t, s.DB().DB) }}
	}
	return open(oldURL), open(freshURL)
}
