package a2a_test

import (
	"context"
	"iter"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	a2ap "github.com/breadai/bread/protocols/a2a"
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

// TestDelegationDepthCrossesA2A: the remote agent client sends its run's
// delegation depth (Bread-Delegation-Depth) and the plugin starts the task
// that deep, so the served agents, which delegate to each other, meet the
// limit (8) after five levels of their own, below three inherited ones.
func TestDelegationDepthCrossesA2A(t *testing.T) {
	s := newStack(t, setup{agents: []*core.Agent{delegator("assistant", "c"), delegator("c", "assistant")}})
	remote, err := a2ap.NewRemote(a2ap.RemoteOptions{URL: s.url})
	if err != nil {
		t.Fatal(err)
	}
	ctx := core.WithDelegationChain(t.Context(), []string{"x", "y", "z"})
	var last error
	for _, err := range remote.Run(ctx, "assistant", "go", core.RunOptions{}) {
		if err != nil {
			last = err
		}
	}
	if last == nil || !strings.Contains(last.Error(), "(remote) → (remote) → (remote) → assistant → c → assistant → c → assistant → c") {
		t.Fatalf("the remote task ended with %v, want DELEGATION_DEPTH_EXCEEDED after three inherited levels", last)
	}
}
