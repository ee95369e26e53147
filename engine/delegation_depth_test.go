package engine_test

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

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

// TestDelegationDepthSurvivesAResume: a delegated run that suspends for a
// human goes on, once answered, at the depth it suspended at: its
// checkpoint keeps the chain (meta bread.delegation), so a chain that
// passes a human does not start the limit again. top delegates to mid
// (depth 1), mid asks a human; answered, mid delegates to leaf1, which
// delegates to leaf2: three levels under a limit of 2. Before, the
// resumed mid started at depth 0 and leaf2 ran.
func TestDelegationDepthSurvivesAResume(t *testing.T) {
	delegate := func(to string) modeltest.Turn {
		return modeltest.ToolCall("core_delegate", map[string]any{"agentId": to, "input": "x"})
	}
	agent := func(id string, turns ...modeltest.Turn) *core.Agent {
		return &core.Agent{ID: id, Model: core.ModelRef{Provider: "m", Model: id}, Providers: modeltest.New(turns...).Registry("m")}
	}
	top := agent("top", delegate("mid"), modeltest.Text("top done"))
	top.Supervisor = &core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "mid"}}}
	mid := agent("mid", modeltest.ToolCall("human_confirm", map[string]any{}), delegate("leaf1"), modeltest.Text("mid done"))
	mid.HumanTools = []core.HumanToolDef{{Name: "confirm", Prompt: "Go on?", Schema: []byte(`{"type":"object"}`)}}
	mid.Supervisor = &core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "leaf1"}}}
	leaf1 := agent("leaf1", delegate("leaf2"), modeltest.Text("leaf1 done"))
	leaf1.Supervisor = &core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "leaf2"}}}
	leaf2 := agent("leaf2", modeltest.Text("leaf2 done"))
	tb := newTestbed(t, modeltest.New(), []*core.Agent{top, mid, leaf1, leaf2}, func(c *engine.Config) { c.MaxDelegationDepth = 2 })

	cs, err := tb.run(t, "top", "go", core.RunOptions{})
	if err != nil {
		t.Fatalf("the first run: %v", err)
	}
	hr := last[*core.HumanRequired](t, cs)
	cs, err = collect(tb.in.Resume(context.Background(), hr.CheckpointID, map[string]any{}))
	var be *core.BreadError
	if !errors.As(err, &be) || be.Code != core.CodeDelegationDepth {
		t.Fatalf("the resume ended with %v (%v), want DELEGATION_DEPTH_EXCEEDED", err, types(cs))
	}
	if !strings.Contains(be.Message, "top → mid → leaf1 → leaf2") {
		t.Errorf("message %q does not name the chain top → mid → leaf1 → leaf2", be.Message)
	}
	for _, c := range cs {
		if end, ok := c.(*core.AgentRunEnd); ok && end.AgentID == "leaf2" {
			t.Errorf("leaf2 ran, three levels deep under a limit of 2")
		}
	}
}

// TestDelegationDepthCrossesTheJobQueue: a background run queued by a
// request that is already two delegations deep (Bread-Delegation-Depth: 2,
// or a delegating run) starts that deep on the worker, instead of at the
// top (issue 29): with a maximum of 3, a → b is its last delegation.
func TestDelegationDepthCrossesTheJobQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		a := recursing("a", "core_delegate", map[string]any{"agentId": "b", "input": "x"}, &calls)
		a.Supervisor = &core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "b"}}}
		b := recursing("b", "core_delegate", map[string]any{"agentId": "a", "input": "x"}, &calls)
		b.Supervisor = &core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "a"}}}
		tb := newTestbed(t, modeltest.New(), []*core.Agent{a, b}, withQueue(1), func(c *engine.Config) { c.MaxDelegationDepth = 3 })
		ctx := core.DelegationFromHeader(t.Context(), http.Header{core.DelegationDepthHeader: {"2"}})
		d, err := tb.in.RunBackground(ctx, "a", "go", core.RunOptions{}, core.BackgroundOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rec := waitRecord(t, tb.store, d.RunID, status(core.RunFailed))
		if rec.ErrorCode != core.CodeDelegationDepth {
			t.Fatalf("the queued run ended %+v, want DELEGATION_DEPTH_EXCEEDED", rec)
		}
		if n := calls.Load(); n != 2 {
			t.Errorf("the models were called %d times, want 2 (levels 2 and 3 of 3)", n)
		}
	})
}
