package upgradetest

import (
	"context"
	"encoding/json"
	"iter"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// The agent of the fixture: it answers a first run, and on the second run
// of the session asks a human before it publishes.
const (
	agentID   = "publisher"
	humanTool = "human_approve_publish"
)

func publisher() *core.Agent {
	return &core.Agent{ID: agentID, Model: core.ModelRef{Provider: "mock", Model: "m"}, HumanTools: []core.HumanToolDef{
		{Name: "approve_publish", Prompt: "May I publish?", Schema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`)},
	}}
}

// startEngine runs an engine on store with model; Start migrates the store.
func startEngine(t *testing.T, store core.BreadStore, model *modeltest.Model) *engine.Instance {
	t.Helper()
	in, err := engine.New(engine.Config{Store: store, Agents: []*core.Agent{publisher()}, Providers: model.Registry("mock")})
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	if err := in.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	return in
}

// collect drains a stream: its crumbs and the last error.
func collect(seq iter.Seq2[core.Crumb, error]) ([]core.Crumb, error) {
	var out []core.Crumb
	var last error
	for c, err := range seq {
		if c != nil {
			out = append(out, c)
		}
		if err != nil {
			last = err
		}
	}
	return out, last
}
