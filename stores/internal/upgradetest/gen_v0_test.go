package upgradetest

import (
	"flag"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/stores/postgres"
	"github.com/breadai/bread/stores/sqlite"
)

var fillDir = flag.String("fill-v0", "", "fill a SQLite file in this directory and the PostgreSQL schema bread_v0 with the fixture's rows")

// TestFillV0 wrote the rows of testdata/*/v0.sql with the code of the
// release before the migration history; the dumps were then taken with
// sqlite3 .dump and pg_dump (see testdata/README.md).
func TestFillV0(t *testing.T) {
	if *fillDir == "" {
		t.Skip("-fill-v0 not given")
	}
	lite, err := sqlite.New(sqlite.Options{Path: filepath.Join(*fillDir, "v0.db")})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, lite)
	pg, err := postgres.New(postgres.Options{URL: "postgres://postgres@127.0.0.1:5432/test?sslmode=disable&search_path=bread_v0"})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, pg)
}

func fill(t *testing.T, s core.BreadStore) {
	ctx := t.Context()
	model := modeltest.New(
		modeltest.Text("Hello, I publish things."),
		modeltest.ToolCall(humanTool, map[string]string{"url": "https://bread.dev/v0"}),
		modeltest.Text("Published."),
	)
	in := startEngine(t, s, model)
	cs, err := collect(in.Run(ctx, agentID, "who are you?", core.RunOptions{Session: core.SessionOptions{ID: "session-v0"}}))
	if err != nil {
		t.Fatal(err)
	}
	cs, err = collect(in.Run(ctx, agentID, "publish the v0 notes", core.RunOptions{Session: core.SessionOptions{ID: "session-v0"}}))
	if err != nil {
		t.Fatal(err)
	}
	hr, ok := cs[len(cs)-1].(*core.HumanRequired)
	if !ok {
		t.Fatalf("the second run did not suspend: %T", cs[len(cs)-1])
	}
	fmt.Println("suspended", hr.RunID, hr.CheckpointID)

	// One row in each table the engine run does not write.
	if err := s.(core.LoopStore).CreateLoop(ctx, core.LoopRecord{ID: "loop-v0", AgentID: agentID, SessionID: "session-v0", RunID: "run-loop-v0",
		Pool: []string{"drafter", "critic"}, Pipeline: []string{"drafter", "critic"}, MaxIterations: 3, Status: core.LoopRunning, StartedAt: 1700000000000}); err != nil {
		t.Fatal(err)
	}
	if err := s.(core.LoopStore).AddLoopIteration(ctx, core.LoopIteration{ID: "iteration-v0", LoopID: "loop-v0", Index: 1,
		Input: []byte(`{"draft": 1}`), Output: []byte(`{"critique":"more"}`), StartedAt: 1700000000001, CompletedAt: 1700000000002}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SettleJoin(ctx, "join-v0", 2, 0, []byte(`"first"`)); err != nil {
		t.Fatal(err)
	}
	if err := s.(core.TaskRunStore).CreateTaskRun(ctx, core.TaskRunRecord{ID: "task-run-v0", TaskID: "summarise", AgentID: agentID, SessionID: "session-v0",
		Model: core.TaskModelInfo{Provider: "mock", Model: "m"}, Input: []byte(`{"text":"v0"}`), Status: core.TaskRunning, CreatedAt: 1700000000003}); err != nil {
		t.Fatal(err)
	}
	ks := s.(core.KnowledgeStore)
	a, err := ks.AddKnowledgeNode(ctx, core.NewKnowledgeNode{AgentID: agentID, SessionID: "session-v0", Label: "bread", Data: map[string]any{"kind": "food"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ks.AddKnowledgeNode(ctx, core.NewKnowledgeNode{AgentID: agentID, Label: "flour"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ks.AddKnowledgeEdge(ctx, core.KnowledgeEdge{FromID: a.ID, ToID: b.ID, Relation: "made_of"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.(core.DocumentStore).IngestDocument(ctx, core.NewDocument{AgentID: agentID, Title: "Release notes v0", Content: "The first release.", Source: "notes.md"}); err != nil {
		t.Fatal(err)
	}
	_ = in.Stop(ctx) // closes s
}
