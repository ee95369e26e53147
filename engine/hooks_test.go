package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// hookPlugin contributes hooks.
type hookPlugin struct {
	name  string
	hooks core.Hooks
}

func (p hookPlugin) Name() string      { return p.name }
func (p hookPlugin) Hooks() core.Hooks { return p.hooks }

// tracer records hook calls in order.
type tracer struct {
	mu    sync.Mutex
	calls []string
}

func (tr *tracer) add(s string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.calls = append(tr.calls, s)
}

func (tr *tracer) String() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return strings.Join(tr.calls, " ")
}

func TestAgentHookChainOrder(t *testing.T) {
	tr := &tracer{}
	mk := func(who string) core.Hooks {
		return core.Hooks{
			BeforeRun: func(_ context.Context, hc core.HookContext, in any) (*core.BeforeRunResult, error) {
				tr.add(who + ".before(" + string(hc.Scope) + "," + in.(string) + ")")
				return &core.BeforeRunResult{Action: core.Continue, Input: in.(string) + "+" + who}, nil
			},
			AfterRun: func(_ context.Context, _ core.HookContext, _, out any, _ time.Duration) (*core.AfterRunResult, error) {
				tr.add(who + ".after")
				return &core.AfterRunResult{Output: out.(string) + "|" + who}, nil
			},
		}
	}
	a := textAgent("a")
	a.Hooks = mk("agent")
	tb := newTestbed(t, modeltest.New(modeltest.Text("out")), []*core.Agent{a}, func(c *engine.Config) {
		c.Plugins = []core.BreadPlugin{hookPlugin{"p1", mk("p1")}, hookPlugin{"p2", mk("p2")}}
		c.Hooks = mk("global")
	})
	cs, err := tb.run(t, "a", "in", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "agent.before(agent,in) p1.before(agent,in+agent) p2.before(agent,in+agent+p1) global.before(agent,in+agent+p1+p2) agent.after p1.after p2.after global.after"
	if tr.String() != want {
		t.Errorf("chain\n got %s\nwant %s", tr, want)
	}
	if got := cs[0].(*core.AgentRunStart).Input; got != "in+agent+p1+p2+global" {
		t.Errorf("agent:run:start carries the overridden input, got %v", got)
	}
	if got := last[*core.AgentRunEnd](t, cs).Output; got != "out|agent|p1|p2|global" {
		t.Errorf("afterRun replacements chain, got %v", got)
	}
	if got := tb.model.Requests()[0].Messages[0].Parts[0].Text; got != "in+agent+p1+p2+global" {
		t.Errorf("the model sees the overridden input, got %q", got)
	}
}

func TestBeforeRunShortCircuit(t *testing.T) {
	var after bool
	a := textAgent("a")
	a.Hooks.BeforeRun = func(context.Context, core.HookContext, any) (*core.BeforeRunResult, error) {
		return &core.BeforeRunResult{Action: core.ShortCircuit, Output: map[string]any{"cached": true}}, nil
	}
	a.Hooks.AfterRun = func(_ context.Context, _ core.HookContext, _, out any, _ time.Duration) (*core.AfterRunResult, error) {
		after = true
		return nil, nil
	}
	tb := newTestbed(t, modeltest.New(modeltest.Text("never")), []*core.Agent{a})
	cs, err := tb.run(t, "a", "q", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, cs, core.TypeAgentRunStart, core.TypeAgentRunEnd)
	if tb.model.Calls() != 0 || !after {
		t.Errorf("model calls %d, afterRun ran %v", tb.model.Calls(), after)
	}
	msgs := tb.messages(t, cs[0].Base().SessionID)
	if len(msgs) != 2 || msgs[1].Parts[0].Text != `{"cached":true}` {
		t.Errorf("a short-circuit is persisted: %+v", msgs)
	}
}

func TestAgentOnErrorAndRetry(t *testing.T) {
	fail := errors.New("provider exploded")
	tests := []struct {
		name      string
		turns     []modeltest.Turn
		policy    *core.RetryPolicy
		onError   func(n int) (*core.OnErrorResult, error)
		wantOut   string
		wantCode  string
		wantMsg   string
		wantCalls int
	}{
		{
			name:      "no policy, no hook: the error stands",
			turns:     []modeltest.Turn{modeltest.Fail(fail)},
			wantCode:  core.CodeInternalError, // a plain model error reaches the client as INTERNAL_ERROR
			wantMsg:   "internal error",       // not "provider exploded": a plain error stays in the log
			wantCalls: 1,
		},
		{
			name:      "default retry from errorHandling",
			turns:     []modeltest.Turn{modeltest.Fail(fail), modeltest.Fail(fail), modeltest.Text("third time")},
			policy:    &core.RetryPolicy{Attempts: 3, BackoffMs: 1},
			wantOut:   "third time",
			wantCalls: 3,
		},
		{
			name:      "retries exhausted: the last attempt's error wins",
			turns:     []modeltest.Turn{modeltest.Fail(errors.New("first")), modeltest.Fail(errors.New("second"))},
			policy:    &core.RetryPolicy{Attempts: 2, BackoffMs: 1},
			wantCode:  core.CodeInternalError, // a plain model error reaches the client as INTERNAL_ERROR
			wantMsg:   "internal error",
			wantCalls: 2,
		},
		{
			name:  "recover",
			turns: []modeltest.Turn{modeltest.Fail(fail)},
			onError: func(int) (*core.OnErrorResult, error) {
				return &core.OnErrorResult{Action: core.Recover, Output: "fallback"}, nil
			},
			wantOut:   "fallback",
			wantCalls: 1,
		},
		{
			name:   "fail overrides a configured retry",
			turns:  []modeltest.Turn{modeltest.Fail(fail)},
			policy: &core.RetryPolicy{Attempts: 5, BackoffMs: 1},
			onError: func(int) (*core.OnErrorResult, error) {
				return &core.OnErrorResult{Action: core.Fail, Error: &core.BreadError{Code: "UPSTREAM_DOWN", Message: "upstream is down"}}, nil
			},
			wantCode:  "UPSTREAM_DOWN",
			wantCalls: 1,
		},
		{
			name:      "explicit retry without a policy retries once",
			turns:     []modeltest.Turn{modeltest.Fail(fail)},
			onError:   func(int) (*core.OnErrorResult, error) { return &core.OnErrorResult{Action: core.Retry}, nil },
			wantCode:  core.CodeInternalError, // a plain model error reaches the client as INTERNAL_ERROR
			wantCalls: 2,
		},
		{
			name:  "a failing hook stops the chain with its error",
			turns: []modeltest.Turn{modeltest.Fail(fail)},
			onError: func(int) (*core.OnErrorResult, error) {
				return nil, &core.BreadError{Code: "HOOK_BUG", Message: "hook broke"}
			},
			wantCode:  "HOOK_BUG",
			wantCalls: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := textAgent("a")
			a.ErrorHandling.Retry = tt.policy
			var n int
			if tt.onError != nil {
				a.Hooks.OnError = func(_ context.Context, hc core.HookContext, _ any, err *core.BreadError) (*core.OnErrorResult, error) {
					n++
					return tt.onError(n)
				}
			}
			tb := newTestbed(t, modeltest.New(tt.turns...), []*core.Agent{a})
			cs, err := tb.run(t, "a", "x", core.RunOptions{})
			if tb.model.Calls() != tt.wantCalls {
				t.Errorf("model calls %d, want %d", tb.model.Calls(), tt.wantCalls)
			}
			if tt.wantCode != "" {
				wantCode(t, err, tt.wantCode)
				ae := last[*core.AgentError](t, cs)
				if ae.RunID == "" || (tt.wantMsg != "" && !strings.Contains(ae.Error.Message, tt.wantMsg)) {
					t.Errorf("agent:error %+v", ae)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := last[*core.AgentRunEnd](t, cs).Output; got != tt.wantOut {
				t.Errorf("output %v, want %v", got, tt.wantOut)
			}
		})
	}
}

func TestGlobalHooksSeeEveryScope(t *testing.T) {
	tr := &tracer{}
	a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{weatherTool()}}
	tb := newTestbed(t, modeltest.New(modeltest.ToolCall("tool_weather", cityArgs{City: "Oslo"}), modeltest.Text("ok")), []*core.Agent{a}, func(c *engine.Config) {
		c.Hooks.BeforeRun = func(_ context.Context, hc core.HookContext, _ any) (*core.BeforeRunResult, error) {
			tr.add(string(hc.Scope) + ":" + hc.ToolName)
			return nil, nil
		}
	})
	if _, err := tb.run(t, "a", "x", core.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if tr.String() != "agent: tool:tool_weather" {
		t.Errorf("global hook scopes %q", tr)
	}
}
