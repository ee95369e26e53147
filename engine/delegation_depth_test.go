package engine_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// recursingModel calls one tool on every turn, whatever it is told: the
// model of agents that delegate to each other for ever.
type recursingModel struct {
	tool  string
	args  any
	calls *atomic.Int64
}

func (m recursingModel) Stream(context.Context, core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	m.calls.Add(1)
	return modeltest.New(modeltest.ToolCall(m.tool, m.args)).Stream(context.Background(), core.ModelRequest{})
}

func recursing(id, tool string, args any, calls *atomic.Int64) *core.Agent {
	return &core.Agent{ID: id, Model: core.ModelRef{Provider: "loop", Model: id}, Providers: core.ProviderRegistry{
		"loop": func(string) (core.LanguageModel, error) { return recursingModel{tool, args, calls}, nil },
	}}
}

// TestDelegationDepthIsBounded: agents that delegate to each other (a → b
// → a) or to themselves through a loop pool recursed until the client went
// away. The run now ends with DELEGATION_DEPTH_EXCEEDED when a delegation
// would go past the maximum depth: each level ran its model once, no
// retry policy or error hook runs the chain again, and the error names
// the chain.
func TestDelegationDepthIsBounded(t *testing.T) {
	mutual := func(calls *atomic.Int64) []*core.Agent {
		a := recursing("a", "core_delegate", map[string]any{"agentId": "b", "input": "x"}, calls)
		a.Supervisor = &core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "b"}}}
		b := recursing("b", "core_delegate", map[string]any{"agentId": "a", "input": "x"}, calls)
		b.Supervisor = &core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "a"}}}
		return []*core.Agent{a, b}
	}
	self := func(calls *atomic.Int64) []*core.Agent {
		a := recursing("a", "core_start_loop", map[string]any{"pipeline": []string{"a"}}, calls)
		a.Loop = &core.LoopConfig{Pool: []string{"a"}, MaxIterations: 3}
		return []*core.Agent{a}
	}
	for _, tt := range []struct {
		name     string
		agents   func(*atomic.Int64) []*core.Agent
		maxDepth int
		retry    bool
		runs     int64 // model calls: one per level, top level included
		chain    string
	}{
		{"mutual supervisors, default depth", mutual, 0, false, engine.DefaultMaxDelegationDepth + 1, "a → b → a → b → a → b → a → b → a → b"},
		{"mutual supervisors, depth 3", mutual, 3, false, 4, "a → b → a → b → a"},
		{"mutual supervisors, depth 1, with a retry policy", mutual, 1, true, 2, "a → b → a"},
		{"an agent looping over itself", self, 2, false, 3, "a → a → a → a"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int64
			agents := tt.agents(&calls)
			if tt.retry {
				for _, a := range agents {
					a.ErrorHandling.Retry = &core.RetryPolicy{Attempts: 3, BackoffMs: 1}
					a.Hooks.OnError = func(context.Context, core.HookContext, any, *core.BreadError) (*core.OnErrorResult, error) {
						return &core.OnErrorResult{Action: core.Recover, Output: "swallowed"}, nil
					}
				}
			}
			tb := newTestbed(t, modeltest.New(), agents, func(c *engine.Config) { c.MaxDelegationDepth = tt.maxDepth })
			cs, err := tb.run(t, "a", "go", core.RunOptions{})
			var be *core.BreadError
			if !errors.As(err, &be) || be.Code != core.CodeDelegationDepth {
				t.Fatalf("the run ended with %v, want DELEGATION_DEPTH_EXCEEDED", err)
			}
			if !strings.Contains(be.Message, tt.chain) {
				t.Errorf("message %q does not name the chain %s", be.Message, tt.chain)
			}
			if n := calls.Load(); n != tt.runs {
				t.Errorf("the models were called %d times, want %d (one per level)", n, tt.runs)
			}
			if end := last[*core.AgentError](t, cs); end.Error == nil || end.Error.Code != core.CodeDelegationDepth || end.AgentID != "a" {
				t.Errorf("the stream ends with %+v, want the top run's DELEGATION_DEPTH_EXCEEDED", end)
			}
		})
	}
}

func TestMaxDelegationDepthMustNotBeNegative(t *testing.T) {
	_, err := engine.New(engine.Config{Store: memory.New(), MaxDelegationDepth: -1})
	var be *core.BreadError
	if !errors.As(err, &be) || be.Code != core.CodeInvalidConfig || !strings.Contains(be.Message, "MaxDelegationDepth") {
		t.Fatalf("New: %v, want INVALID_CONFIG naming MaxDelegationDepth", err)
	}
}
