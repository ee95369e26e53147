package enginetest_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/server"
)

type runState struct {
	RunID      string `json:"runId"`
	AgentID    string `json:"agentId"`
	SessionID  string `json:"sessionId"`
	Status     string `json:"status"`
	Owner      string `json:"owner"`
	LastSeq    int64  `json:"lastSeq"`
	ErrorCode  string `json:"errorCode"`
	Checkpoint *struct {
		ID       string          `json:"id"`
		ToolName string          `json:"toolName"`
		Kind     string          `json:"kind"`
		Schema   json.RawMessage `json:"schema"`
	} `json:"checkpoint"`
}

func TestReadRun(t *testing.T) {
	asker := &core.Agent{ID: "asker", Model: core.ModelRef{Provider: "scripted", Model: "m"}, HumanTools: []core.HumanToolDef{
		{Name: "confirm", Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)},
	}}
	f := newFixture(t, engine.Config{Agents: []*core.Agent{asker}},
		modeltest.Text("hello"), modeltest.ToolCall("human_confirm", map[string]bool{"ok": true}))
	ts := f.serve(t, server.Options{})

	var runID string
	for c, err := range f.inst.Run(context.Background(), "writer", "hi", core.RunOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		runID = c.Base().RunID
	}
	var got runState
	r := do(t, ts.URL, "GET", "/runs/"+runID, "")
	if r.status != 200 {
		t.Fatalf("GET /runs/%s = %d %s", runID, r.status, r.body)
	}
	r.decode(t, &got)
	if got.RunID != runID || got.AgentID != "writer" || got.Status != "completed" || got.LastSeq < 2 || got.Owner != "" || got.Checkpoint != nil {
		t.Errorf("a completed run: %s", r.body)
	}

	var hr *core.HumanRequired
	for c := range f.inst.Run(context.Background(), "asker", "hi", core.RunOptions{}) {
		if h, ok := c.(*core.HumanRequired); ok {
			hr = h
		}
	}
	if hr == nil {
		t.Fatal("the asker did not suspend")
	}
	got = runState{}
	r = do(t, ts.URL, "GET", "/runs/"+hr.RunID, "")
	r.decode(t, &got)
	if got.Status != "suspended" || got.Checkpoint == nil || got.Checkpoint.ID != hr.CheckpointID || got.Checkpoint.ToolName != "human_confirm" || got.Checkpoint.Kind != "input" {
		t.Errorf("a suspended run: %s", r.body)
	}

	if r := do(t, ts.URL, "GET", "/runs/no-such-run", ""); r.status != 404 || r.errorCode(t) != core.CodeRunNotFound {
		t.Errorf("an unknown run: %d %s", r.status, r.body)
	}
}
