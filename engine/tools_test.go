package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/typed"
)

type cityArgs struct {
	City string `json:"city" validate:"required"`
}

func weatherTool() core.Tool {
	return typed.DefineTool("weather", "Weather for a city.", func(_ context.Context, a cityArgs, tc core.ToolContext) (map[string]any, error) {
		return map[string]any{"city": a.City, "sky": "sunny"}, nil
	})
}

func TestToolCallRoundTrip(t *testing.T) {
	a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{weatherTool()}}
	tb := newTestbed(t, modeltest.New(
		modeltest.ToolCall("tool_weather", cityArgs{City: "Rome"}),
		modeltest.Text("It is sunny."),
	), []*core.Agent{a})
	cs, err := tb.run(t, "a", "weather in Rome?", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, cs, core.TypeAgentRunStart, core.TypeToolCall, core.TypeToolResult, core.TypeTextDelta, core.TypeAgentRunEnd)
	call := last[*core.ToolCall](t, cs)
	if call.ToolName != "tool_weather" || call.ToolCallID != "call-tool_weather" {
		t.Errorf("tool:call %+v", call)
	}
	reqs := tb.model.Requests()
	if len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Name != "tool_weather" || !strings.Contains(string(reqs[0].Tools[0].InputSchema), `"city"`) {
		t.Errorf("tool spec %+v", reqs[0].Tools)
	}
	second := reqs[1].Messages
	toolMsg := second[len(second)-1]
	if toolMsg.Role != core.RoleTool || string(toolMsg.Parts[0].Output) != `{"city":"Rome","sky":"sunny"}` {
		t.Errorf("the model sees the result: %+v", toolMsg)
	}
	// Persisted: user, assistant(tool-call), tool(result), assistant(text).
	msgs := tb.messages(t, call.SessionID)
	var roles []string
	for _, m := range msgs {
		roles = append(roles, string(m.Role))
	}
	if strings.Join(roles, ",") != "user,assistant,tool,assistant" {
		t.Errorf("persisted roles %v", roles)
	}
}

func TestToolCallsInOneTurnRunConcurrently(t *testing.T) {
	var started sync.WaitGroup
	started.Add(2)
	both := make(chan struct{})
	go func() { started.Wait(); close(both) }()
	slow := typed.DefineTool("slow", "", func(ctx context.Context, a struct {
		N int `json:"n"`
	}, _ core.ToolContext) (int, error) {
		started.Done()
		select { // each call waits for the other: only concurrent calls finish
		case <-both:
			return a.N * 10, nil
		case <-time.After(10 * time.Second):
			return 0, errors.New("tool calls ran one after the other")
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	})
	a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{slow}}
	tb := newTestbed(t, modeltest.New(
		modeltest.ToolCalls(modeltest.Call{ID: "x", Name: "tool_slow", Args: map[string]int{"n": 1}}, modeltest.Call{ID: "y", Name: "tool_slow", Args: map[string]int{"n": 2}}),
		modeltest.Text("done"),
	), []*core.Agent{a})
	cs, err := tb.run(t, "a", "go", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	results := find[*core.ToolResult](cs)
	if len(results) != 2 {
		t.Fatalf("results %v", types(cs))
	}
	msgs := tb.model.Requests()[1].Messages
	parts := msgs[len(msgs)-1].Parts
	if parts[0].ToolCallID != "x" || string(parts[0].Output) != "10" || parts[1].ToolCallID != "y" || string(parts[1].Output) != "20" {
		t.Errorf("results go back in call order: %+v", parts)
	}
}

func TestStreamingTool(t *testing.T) {
	progress := typed.DefineStreamingTool("fetch", "", func(_ context.Context, _ struct{}, _ core.ToolContext) iter.Seq2[string, error] {
		return func(yield func(string, error) bool) {
			for _, s := range []string{"started", "downloaded", "done"} {
				if !yield(s, nil) {
					return
				}
			}
		}
	})
	a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{progress}}
	tb := newTestbed(t, modeltest.New(modeltest.ToolCall("tool_fetch", map[string]any{}), modeltest.Text("ok")), []*core.Agent{a})
	cs, err := tb.run(t, "a", "go", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, cs, core.TypeAgentRunStart, core.TypeToolCall,
		core.TypeToolResultPartial, core.TypeToolResultPartial, core.TypeToolResultPartial,
		core.TypeToolResult, core.TypeTextDelta, core.TypeAgentRunEnd)
	if r := last[*core.ToolResult](t, cs); r.Result != "done" {
		t.Errorf("the last value is the result, got %v", r.Result)
	}
}

func TestToolFailuresReachTheModel(t *testing.T) {
	boom := typed.DefineTool("boom", "", func(context.Context, struct{}, core.ToolContext) (int, error) {
		return 0, errors.New("disk on fire")
	})
	panics := typed.DefineTool("panics", "", func(context.Context, struct{}, core.ToolContext) (int, error) {
		panic("bug")
	})
	tests := []struct {
		name, call string
		args       any
		code       string
		wantCall   bool
	}{
		{"error", "tool_boom", map[string]any{}, core.CodeToolError, true},
		{"panic", "tool_panics", map[string]any{}, core.CodeToolError, true},
		{"unknown tool", "tool_nope", map[string]any{}, core.CodeToolNotFound, false},
		{"invalid arguments", "tool_weather", map[string]any{"town": "Rome"}, core.CodeValidationError, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{boom, panics, weatherTool()}}
			tb := newTestbed(t, modeltest.New(modeltest.ToolCall(tt.call, tt.args), modeltest.Text("sorry")), []*core.Agent{a})
			cs, err := tb.run(t, "a", "go", core.RunOptions{})
			if err != nil {
				t.Fatalf("a tool failure must not fail the run: %v", err)
			}
			te := last[*core.ToolError](t, cs)
			if te.Error.Code != tt.code {
				t.Errorf("tool:error code %s (%s), want %s", te.Error.Code, te.Error.Message, tt.code)
			}
			if got := len(find[*core.ToolCall](cs)) == 1; got != tt.wantCall {
				t.Errorf("tool:call emitted %v, want %v", got, tt.wantCall)
			}
			msgs := tb.model.Requests()[1].Messages
			part := msgs[len(msgs)-1].Parts[0]
			if !part.IsError || !strings.Contains(string(part.Output), tt.code) {
				t.Errorf("the model sees an error result: %+v", part)
			}
		})
	}
}

func TestToolHooks(t *testing.T) {
	var calls int
	var mu sync.Mutex
	flaky := func(failures int) core.Tool {
		return typed.DefineTool("flaky", "", func(context.Context, struct{}, core.ToolContext) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls <= failures {
				return "", errors.New("transient")
			}
			return "ok", nil
		})
	}
	tests := []struct {
		name       string
		tool       func() core.Tool
		wantResult string // the tool:result crumb
		wantModel  string // what the model receives
		wantCalls  int
		wantError  string // what the model reads
		// clientSees is tool:error's message: the tool's own for a
		// *core.BreadError, only the tool's name for a plain error.
		clientSees string
	}{
		{
			name: "beforeRun overrides the arguments",
			tool: func() core.Tool {
				t := weatherTool()
				t.Hooks.BeforeRun = func(_ context.Context, hc core.HookContext, in any) (*core.BeforeRunResult, error) {
					if hc.Scope != core.HookTool || hc.ToolName != "tool_weather" {
						return nil, errors.New("wrong hook context")
					}
					return &core.BeforeRunResult{Action: core.Continue, Input: map[string]any{"city": "Paris"}}, nil
				}
				return t
			},
			wantResult: `{"city":"Paris","sky":"sunny"}`,
			wantModel:  `{"city":"Paris","sky":"sunny"}`,
		},
		{
			name: "beforeRun short-circuits like a cache",
			tool: func() core.Tool {
				t := weatherTool()
				t.Execute = func(context.Context, json.RawMessage, core.ToolContext) (any, error) {
					return nil, errors.New("must not run")
				}
				t.Hooks.BeforeRun = func(context.Context, core.HookContext, any) (*core.BeforeRunResult, error) {
					return &core.BeforeRunResult{Action: core.ShortCircuit, Output: "cached"}, nil
				}
				return t
			},
			wantResult: `"cached"`,
			wantModel:  `"cached"`,
		},
		{
			name: "afterRun replaces what the model sees",
			tool: func() core.Tool {
				t := weatherTool()
				t.Hooks.AfterRun = func(_ context.Context, _ core.HookContext, _, out any, _ time.Duration) (*core.AfterRunResult, error) {
					return &core.AfterRunResult{Output: "redacted"}, nil
				}
				return t
			},
			wantResult: `{"city":"Rome","sky":"sunny"}`,
			wantModel:  `"redacted"`,
		},
		{
			name: "onError recovers",
			tool: func() core.Tool {
				t := flaky(99)
				t.Hooks.OnError = func(context.Context, core.HookContext, any, *core.BreadError) (*core.OnErrorResult, error) {
					return &core.OnErrorResult{Action: core.Recover, Output: "fallback"}, nil
				}
				return t
			},
			wantResult: `"fallback"`,
			wantModel:  `"fallback"`,
			wantCalls:  1,
		},
		{
			name: "retry policy retries by default",
			tool: func() core.Tool {
				t := flaky(2)
				t.ErrorHandling.Retry = &core.RetryPolicy{Attempts: 3, BackoffMs: 1}
				return t
			},
			wantResult: `"ok"`,
			wantModel:  `"ok"`,
			wantCalls:  3,
		},
		{
			name: "retry policy exhausted: the last error wins",
			tool: func() core.Tool {
				t := flaky(5)
				t.ErrorHandling.Retry = &core.RetryPolicy{Attempts: 2, BackoffMs: 1}
				return t
			},
			wantCalls:  2,
			wantError:  "transient",
			clientSees: "tool tool_flaky failed; the server logged why",
		},
		{
			name: "an explicit retry without a policy retries once",
			tool: func() core.Tool {
				t := flaky(5)
				t.Hooks.OnError = func(context.Context, core.HookContext, any, *core.BreadError) (*core.OnErrorResult, error) {
					return &core.OnErrorResult{Action: core.Retry}, nil
				}
				return t
			},
			wantCalls:  2,
			wantError:  "transient",
			clientSees: "tool tool_flaky failed; the server logged why",
		},
		{
			name: "fail replaces the error",
			tool: func() core.Tool {
				t := flaky(5)
				t.ErrorHandling.Retry = &core.RetryPolicy{Attempts: 5, BackoffMs: 1}
				t.Hooks.OnError = func(context.Context, core.HookContext, any, *core.BreadError) (*core.OnErrorResult, error) {
					return &core.OnErrorResult{Action: core.Fail, Error: &core.BreadError{Code: "QUOTA", Message: "out of quota"}}, nil
				}
				return t
			},
			wantCalls:  1,
			wantError:  "out of quota",
			clientSees: "out of quota",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls = 0
			tool := tt.tool()
			name := "tool_" + tool.Name
			a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{tool}}
			var args any = cityArgs{City: "Rome"}
			if tool.Name == "flaky" {
				args = struct{}{}
			}
			tb := newTestbed(t, modeltest.New(modeltest.ToolCall(name, args), modeltest.Text("k")), []*core.Agent{a})
			cs, err := tb.run(t, "a", "go", core.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantCalls > 0 && calls != tt.wantCalls {
				t.Errorf("executed %d times, want %d", calls, tt.wantCalls)
			}
			msgs := tb.model.Requests()[1].Messages
			part := msgs[len(msgs)-1].Parts[0]
			if tt.wantError != "" {
				te := last[*core.ToolError](t, cs)
				if te.Error.Message != tt.clientSees || !strings.Contains(string(part.Output), tt.wantError) || !part.IsError {
					t.Errorf("tool:error %+v, part %+v", te.Error, part)
				}
				return
			}
			if got := asJSON(t, last[*core.ToolResult](t, cs).Result); got != tt.wantResult {
				t.Errorf("tool:result %s, want %s", got, tt.wantResult)
			}
			if string(part.Output) != tt.wantModel {
				t.Errorf("model sees %s, want %s", part.Output, tt.wantModel)
			}
		})
	}
}

func TestToolNamesAndPlugins(t *testing.T) {
	mcp := &toolPlugin{name: "mcp_client", global: []core.Tool{weatherTool()}, perAgent: map[string][]core.Tool{
		"b": {typed.DefineTool("read", "", func(context.Context, struct{}, core.ToolContext) (string, error) { return "r", nil })},
	}}
	a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{weatherTool()}, HumanTools: []core.HumanToolDef{core.HumanTool("ask", json.RawMessage(`{"type":"object"}`))}}
	b := &core.Agent{ID: "b", Model: mockModel(), Plugins: map[string]any{"mcp_client": "servers"}}
	tb := newTestbed(t, modeltest.New(modeltest.Text("x")), []*core.Agent{a, b}, func(c *engine.Config) { c.Plugins = []core.BreadPlugin{mcp} })
	for agent, want := range map[string][]string{
		"a": {"human_ask", "plugin_mcp_client_weather", "tool_weather"},
		"b": {"plugin_mcp_client_read", "plugin_mcp_client_weather"},
	} {
		if _, err := tb.run(t, agent, "x", core.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		reqs := tb.model.Requests()
		var names []string
		for _, s := range reqs[len(reqs)-1].Tools {
			names = append(names, s.Name)
		}
		if !slices.Equal(names, want) {
			t.Errorf("agent %s sees tools %v, want %v", agent, names, want)
		}
	}
	if got := tb.in.PluginTools(); len(got) != 1 || got[0].Plugin != "mcp_client" {
		t.Errorf("PluginTools %+v", got)
	}
	if mcp.resolvedFor["b"] != 1 {
		t.Errorf("ResolveAgentTools is called once per run: %v", mcp.resolvedFor)
	}
}

func TestToolNameCollision(t *testing.T) {
	dup := &toolPlugin{name: "p", perAgent: map[string][]core.Tool{"a": {weatherTool(), weatherTool()}}}
	tb := newTestbed(t, modeltest.New(modeltest.Text("x")), []*core.Agent{{ID: "a", Model: mockModel()}}, func(c *engine.Config) { c.Plugins = []core.BreadPlugin{dup} })
	_, err := tb.run(t, "a", "x", core.RunOptions{})
	wantCode(t, err, core.CodeToolNameCollision)

	_, err = engine.New(engine.Config{Store: tb.store, Agents: []*core.Agent{{ID: "a", Model: mockModel(), Tools: []core.Tool{weatherTool(), weatherTool()}}}})
	wantCode(t, err, core.CodeToolNameCollision)
}

func TestAgentDefinitionErrorsFailNew(t *testing.T) {
	ok := func() core.Tool { return weatherTool() }
	tests := []struct {
		name  string
		agent *core.Agent
		code  string
	}{
		{"bad agent id", &core.Agent{ID: "a/b"}, core.CodeInvalidName},
		{"bad tool name", &core.Agent{ID: "a", Tools: []core.Tool{{Name: "Web-Search", Execute: ok().Execute}}}, core.CodeInvalidName},
		{"tool without execute", &core.Agent{ID: "a", Tools: []core.Tool{{Name: "x"}}}, core.CodeInvalidConfig},
		{"bad human tool name", &core.Agent{ID: "a", HumanTools: []core.HumanToolDef{{Name: "Ask Me"}}}, core.CodeInvalidName},
		{"unknown permission scope", &core.Agent{ID: "a", Permissions: core.Permissions{Deny: []string{"mcp:fs/*"}}}, core.CodeInvalidPermission},
		{"bare star", &core.Agent{ID: "a", Permissions: core.Permissions{Allow: []string{"*"}}}, core.CodeInvalidPermission},
		{"broken schema", &core.Agent{ID: "a", InputSchema: json.RawMessage(`{"type":12}`)}, core.CodeInvalidConfig},
		{"custom format without parse", &core.Agent{ID: "a", Output: core.OutputFormat{Format: "csv"}}, core.CodeInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := engine.New(engine.Config{Store: newTestbed(t, modeltest.New(), nil).store, Agents: []*core.Agent{tt.agent}})
			wantCode(t, err, tt.code)
		})
	}
}

// toolPlugin contributes global tools and per-agent tools.
type toolPlugin struct {
	name        string
	global      []core.Tool
	perAgent    map[string][]core.Tool
	mu          sync.Mutex
	resolvedFor map[string]int
}

func (p *toolPlugin) Name() string       { return p.name }
func (p *toolPlugin) Tools() []core.Tool { return p.global }
func (p *toolPlugin) ResolveAgentTools(_ context.Context, a *core.Agent) ([]core.Tool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.resolvedFor == nil {
		p.resolvedFor = map[string]int{}
	}
	p.resolvedFor[a.ID]++
	return p.perAgent[a.ID], nil
}
