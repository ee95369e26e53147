package remoteagent_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/transports/httpstream"
	"github.com/breadai/bread/transports/httpstream/remoteagent"
	"github.com/breadai/bread/transports/httpstream/streamtest"
)

// delegatingModel delegates to one agent on every turn.
type delegatingModel struct{ to string }

func (m delegatingModel) Stream(context.Context, core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	return modeltest.New(modeltest.ToolCall("core_delegate", map[string]any{"agentId": m.to, "input": "x"})).Stream(context.Background(), core.ModelRequest{})
}

func delegator(id, to string) *core.Agent {
	return &core.Agent{ID: id, Model: core.ModelRef{Provider: "d", Model: id},
		Providers:  core.ProviderRegistry{"d": func(string) (core.LanguageModel, error) { return delegatingModel{to}, nil }},
		Supervisor: &core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: to}}}}
}

func started(t *testing.T, cfg engine.Config) *engine.Instance {
	t.Helper()
	cfg.Store, cfg.MaxDelegationDepth = memory.New(), 3
	inst, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inst.Stop(context.Background()) })
	return inst
}

// TestDelegationDepthCrossesServers: a run that delegates to a remote agent
// sends its depth (Bread-Delegation-Depth) and the remote bread server
// starts there, so a delegation cycle on the remote side meets the limit
// one level sooner and names the level it inherited: "(remote) → b → c →
// b → c". Before, every server counted from zero, and agents delegating
// to each other across servers never met a limit.
func TestDelegationDepthCrossesServers(t *testing.T) {
	for _, format := range []remoteagent.Format{remoteagent.NDJSON, remoteagent.SSE} {
		t.Run(format.String(), func(t *testing.T) {
			remote := started(t, engine.Config{Agents: []*core.Agent{delegator("b", "c"), delegator("c", "b")}})
			url := streamtest.Serve(t, httpstream.New(httpstream.Options{}), remote).URL
			local := started(t, engine.Config{
				Agents:       []*core.Agent{delegator("a", "b")},
				RemoteAgents: map[string]core.RemoteAgent{"b": remoteagent.New(remoteagent.Options{URL: url, Format: format})},
			})
			var last error
			for _, err := range local.Run(context.Background(), "a", "go", core.RunOptions{}) {
				if err != nil {
					last = err
				}
			}
			var be *core.BreadError
			if !errors.As(last, &be) || !strings.Contains(be.Message, "(remote) → b → c → b → c") || strings.Contains(be.Message, "b → c → b → c → b") {
				t.Fatalf("the run ended with %v, want the remote's DELEGATION_DEPTH_EXCEEDED from one inherited level", last)
			}
		})
	}
}
