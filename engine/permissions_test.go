package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/typed"
)

func TestPermissionsShapeTheToolset(t *testing.T) {
	read := typed.DefineTool("read_notes", "", func(context.Context, struct{}, core.ToolContext) (string, error) { return "", nil })
	del := typed.DefineTool("delete_everything", "", func(context.Context, struct{}, core.ToolContext) (string, error) { return "", nil })
	a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{weatherTool(), read, del},
		Permissions: core.Permissions{Allow: []string{"tool:read_*", "tool:weather"}, Ask: []string{"tool:weather"}, Deny: []string{"tool:delete_*"}}}
	tb := newTestbed(t, modeltest.New(modeltest.Text("x")), []*core.Agent{a})
	if _, err := tb.run(t, "a", "x", core.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range tb.model.Requests()[0].Tools {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"tool_read_notes", "tool_weather"}) {
		t.Errorf("tools offered %v", names)
	}
}

func TestGatedToolSuspendsForApproval(t *testing.T) {
	ran := false
	tool := weatherTool()
	inner := tool.Execute
	tool.Execute = func(ctx context.Context, raw json.RawMessage, tc core.ToolContext) (any, error) {
		ran = true
		return inner(ctx, raw, tc)
	}
	a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{tool}, Permissions: core.Permissions{Ask: []string{"tool:weather"}}}
	var suspended string
	a.Hooks.OnSuspend = func(_ context.Context, hc core.HookContext, toolName, cp string) { suspended = toolName + "@" + cp }
	tb := newTestbed(t, modeltest.New(modeltest.ToolCall("tool_weather", cityArgs{City: "Rome"})), []*core.Agent{a})
	cs, err := tb.run(t, "a", "x", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, cs, core.TypeAgentRunStart, core.TypeHumanRequired)
	hr := cs[1].(*core.HumanRequired)
	if ran || hr.Kind != core.HumanApproval || hr.ToolName != "tool_weather" || string(hr.Schema.(json.RawMessage)) != `{"city":"Rome"}` {
		t.Errorf("human:required %+v (tool ran: %v)", hr, ran)
	}
	if suspended != "tool_weather@"+hr.CheckpointID {
		t.Errorf("onSuspend saw %q", suspended)
	}
	cp, err := tb.store.GetCheckpoint(context.Background(), hr.CheckpointID)
	if err != nil || cp.ToolCallID != "call-tool_weather" || cp.Kind != core.HumanApproval || cp.RunID != hr.RunID {
		t.Errorf("checkpoint %+v %v", cp, err)
	}
	msgs := tb.messages(t, hr.SessionID)
	if len(msgs) != 2 || msgs[1].Parts[0].Type != core.PartToolCall {
		t.Errorf("the pending call is persisted with the checkpoint: %+v", msgs)
	}
}

// TestPermissionSelectorsMustNameRealTools: a misspelled selector in ask or
// deny matched nothing and silently turned the gate off; it now fails the
// boot, naming the agent, the list and what exists.
func TestPermissionSelectorsMustNameRealTools(t *testing.T) {
	publish := core.Tool{Name: "publish", Execute: func(context.Context, json.RawMessage, core.ToolContext) (any, error) { return nil, nil }}
	skill := core.Skill{ID: "refunds", Tools: []core.Tool{{Name: "refund", Execute: publish.Execute}}}
	for _, tt := range []struct {
		name string
		p    core.Permissions
		want string // "" means the boot succeeds
		// field is the Config path of the bad selector.
		field string
	}{
		{"a real tool", core.Permissions{Ask: []string{"tool:publish"}}, "", ""},
		{"a misspelled ask", core.Permissions{Ask: []string{"tool:publsh"}}, "publish", `Agents[id="a"].Permissions.Ask[0]`},
		{"a misspelled deny", core.Permissions{Deny: []string{"tool:pubilsh"}}, "publish", `Agents[id="a"].Permissions.Deny[0]`},
		{"a misspelled allow", core.Permissions{Allow: []string{"tool:publish", "tool:pub"}}, "publish", `Agents[id="a"].Permissions.Allow[1]`},
		{"a glob matching a tool", core.Permissions{Deny: []string{"tool:pub*", "tool:*", "tool:*lish"}}, "", ""},
		{"a glob matching no tool", core.Permissions{Ask: []string{"tool:pubx*"}}, "publish", `Agents[id="a"].Permissions.Ask[0]`},
		{"a glob matching no tool after one that does", core.Permissions{Deny: []string{"tool:p*", "tool:*x"}}, "publish", `Agents[id="a"].Permissions.Deny[1]`},
		{"a built-in the agent has", core.Permissions{Deny: []string{"core:load_skill"}}, "", ""},
		{"a built-in glob", core.Permissions{Ask: []string{"core:*"}}, "", ""},
		{"a built-in the agent lacks", core.Permissions{Deny: []string{"core:delegate"}}, "load_skill", ""},
		{"a built-in glob matching nothing", core.Permissions{Deny: []string{"core:kg_*"}}, "load_skill", ""},
		{"a skill glob", core.Permissions{Ask: []string{"skill:*/ref*"}}, "", ""},
		{"a skill glob matching no skill tool", core.Permissions{Ask: []string{"skill:*/pay*"}}, "skill:refunds/refund", ""},
		{"a plugin glob with no plugins", core.Permissions{Deny: []string{"plugin:*"}}, "no configured plugin", ""},
		{"a skill tool", core.Permissions{Ask: []string{"skill:refunds/refund"}}, "", ""},
		{"an unknown skill", core.Permissions{Ask: []string{"skill:refund/refund"}}, "refunds", ""},
		{"an unknown skill tool", core.Permissions{Ask: []string{"skill:refunds/refnd"}}, "refund", ""},
		{"an unknown plugin", core.Permissions{Deny: []string{"plugin:mcp/read"}}, "no configured plugin", ""},
		{"an unknown task", core.Permissions{Ask: []string{"task:extract"}}, "no task tool", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{publish}, Skills: []core.Skill{skill}, Permissions: tt.p}
			_, err := engine.New(engine.Config{Store: memory.New(), Agents: []*core.Agent{a}})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var be *core.BreadError
			if !errors.As(err, &be) || be.Code != core.CodeInvalidPermission || !strings.Contains(be.Message, tt.want) || !strings.Contains(be.Message, "agent a") {
				t.Fatalf("got %v, want INVALID_PERMISSION mentioning %q", err, tt.want)
			}
			if tt.field != "" && be.Context["field"] != tt.field {
				t.Errorf("field %v, want %s", be.Context["field"], tt.field)
			}
		})
	}
}

// TestCompositionsMustNameRealAgents: a Go-built config naming a missing
// agent in a pipeline, a roster or a loop pool fails at Start, not mid-run.
func TestCompositionsMustNameRealAgents(t *testing.T) {
	for _, tt := range []struct {
		name   string
		mutate func(*engine.Config)
	}{
		{"an entrypoint", func(c *engine.Config) { c.Entrypoints = []string{"a", "ghost"} }},
		{"a pipeline step", func(c *engine.Config) {
			c.Pipelines = map[string][]core.PipelineStep{"p": {{Type: core.StepAgent, AgentID: "a"}, {Type: core.StepAgent, AgentID: "ghost"}}}
		}},
		{"a parallel branch", func(c *engine.Config) {
			c.Pipelines = map[string][]core.PipelineStep{"p": {{Type: core.StepParallel, Steps: []core.PipelineStep{{Type: core.StepAgent, AgentID: "ghost"}}}}}
		}},
		{"a route", func(c *engine.Config) {
			c.Pipelines = map[string][]core.PipelineStep{"p": {{Type: core.StepRoute, Decider: "d", Routes: map[string]string{"x": "ghost"}}}}
		}},
		{"a roster", func(c *engine.Config) {
			c.Agents = append(c.Agents, &core.Agent{ID: "boss", Model: mockModel(), Supervisor: &core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "ghost"}}}})
		}},
		{"a loop pool", func(c *engine.Config) {
			c.Agents = append(c.Agents, &core.Agent{ID: "looper", Model: mockModel(), Loop: &core.LoopConfig{Pool: []string{"a", "ghost"}, MaxIterations: 2}})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := engine.Config{Store: memory.New(), Agents: []*core.Agent{textAgent("a")}}
			tt.mutate(&cfg)
			in, err := engine.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = in.Start(context.Background())
			var be *core.BreadError
			if !errors.As(err, &be) || be.Code != core.CodeAgentNotFound || !strings.Contains(be.Message, "ghost") {
				t.Fatalf("Start: %v, want AGENT_NOT_FOUND naming ghost", err)
			}
		})
	}
}

// TestBuiltinToolNamesAreComplete keeps core.BuiltinToolNames (what a
// "core:" selector may name) in step with the tools the engine offers.
func TestBuiltinToolNamesAreComplete(t *testing.T) {
	a := &core.Agent{ID: "all", Model: mockModel(),
		Skills:     []core.Skill{{ID: "s", Name: "S", Instructions: "x"}},
		Knowledge:  &core.KnowledgeConfig{},
		Documents:  &core.DocumentConfig{},
		Supervisor: &core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "helper"}}},
		Loop:       &core.LoopConfig{Pool: []string{"helper"}, MaxIterations: 1},
	}
	tb := newTestbed(t, modeltest.New(modeltest.Text("ok")), []*core.Agent{a, textAgent("helper")},
		func(c *engine.Config) { c.Decisions = map[string]core.Decider{"d": fixedDecider{choice: "x"}} })
	if _, err := tb.run(t, "all", "x", core.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	var offered []string
	for _, name := range toolNames(tb.model.Requests()[0]) {
		if rest, ok := strings.CutPrefix(name, "core_"); ok {
			offered = append(offered, rest)
			if !slices.Contains(core.BuiltinToolNames, rest) {
				t.Errorf("the engine offers core_%s, which core.BuiltinToolNames lacks", rest)
			}
		}
	}
	if len(offered) != len(core.BuiltinToolNames) {
		t.Errorf("offered %v, core.BuiltinToolNames %v", offered, core.BuiltinToolNames)
	}
}

// selectorPlugin gives every agent the global tool "ping" and, as a
// resolver, the run-time tools its names say ("fs__*").
type selectorPlugin struct {
	name  string
	names []string // nil: a resolver that cannot name its tools
}

func (p selectorPlugin) Name() string { return p.name }

type namingPlugin struct{ selectorPlugin }

func (p namingPlugin) ResolveAgentTools(context.Context, *core.Agent) ([]core.Tool, error) {
	return nil, nil
}

func (p namingPlugin) AgentToolNames(*core.Agent) ([]string, error) { return p.names, nil }

type blindPlugin struct{ selectorPlugin }

func (p blindPlugin) ResolveAgentTools(context.Context, *core.Agent) ([]core.Tool, error) {
	return nil, nil
}

type globalPlugin struct{ selectorPlugin }

func (p globalPlugin) Tools() []core.Tool {
	return []core.Tool{{Name: "ping", Execute: func(context.Context, json.RawMessage, core.ToolContext) (any, error) { return nil, nil }}}
}

// TestPluginSelectorsMustMatch: a plugin selector is checked against what
// each plugin says it may give the agent: its global tools, the patterns
// an AgentToolNamer names (an MCP client's "<server>__*"), or anything for
// a resolver that cannot say; a plugin with none of these gives nothing.
func TestPluginSelectorsMustMatch(t *testing.T) {
	plugins := []core.BreadPlugin{
		globalPlugin{selectorPlugin{name: "global"}},
		namingPlugin{selectorPlugin{name: "mcp", names: []string{"fs__*"}}},
		blindPlugin{selectorPlugin{name: "blind"}},
		selectorPlugin{name: "hooks_only"},
	}
	for _, tt := range []struct {
		name string
		sel  string
		want string // "" means the boot succeeds
	}{
		{"a global tool", "plugin:global/ping", ""},
		{"a misspelled global tool", "plugin:global/pong", "plugin:global/ping"},
		{"a named pattern, exactly", "plugin:mcp/fs__read", ""},
		{"a named pattern, by glob", "plugin:mcp/fs__re*", ""},
		{"a glob over every plugin", "plugin:*/fs__*", ""},
		{"another server", "plugin:mcp/git__*", "plugin:mcp/fs__*"},
		{"a resolver that cannot say", "plugin:blind/anything", ""},
		{"a plugin that gives no tools", "plugin:hooks_only/x", "no configured plugin"},
		{"an unknown plugin", "plugin:ghost/*", "no configured plugin"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := &core.Agent{ID: "a", Model: mockModel(), Permissions: core.Permissions{Ask: []string{tt.sel}}}
			_, err := engine.New(engine.Config{Store: memory.New(), Agents: []*core.Agent{a}, Plugins: plugins})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var be *core.BreadError
			if !errors.As(err, &be) || be.Code != core.CodeInvalidPermission || !strings.Contains(be.Message, tt.want) {
				t.Fatalf("got %v, want INVALID_PERMISSION mentioning %q", err, tt.want)
			}
		})
	}
}
