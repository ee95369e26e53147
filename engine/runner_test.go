package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/typed"
)

func TestRunTextAgent(t *testing.T) {
	tb := newTestbed(t, modeltest.New(modeltest.Text("Bread ", "is good.")), []*core.Agent{textAgent("writer")})
	cs, err := tb.run(t, "writer", "tell me about bread", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, cs, core.TypeAgentRunStart, core.TypeTextDelta, core.TypeTextDelta, core.TypeAgentRunEnd)
	end := last[*core.AgentRunEnd](t, cs)
	if end.Output != "Bread is good." {
		t.Errorf("output %v", end.Output)
	}
	if got := [4]int64{cs[0].Base().Seq, cs[1].Base().Seq, cs[2].Base().Seq, cs[3].Base().Seq}; got != [4]int64{1, 1, 1, 3} {
		t.Errorf("seqs %v, want [1 1 1 3] (the aggregated delta takes 2)", got)
	}
	req := tb.model.Requests()[0]
	if req.System != "You are writer." || len(req.Messages) != 1 || req.Messages[0].Parts[0].Text != "tell me about bread" {
		t.Errorf("model request %+v", req)
	}
	msgs := tb.messages(t, end.SessionID)
	if len(msgs) != 2 || msgs[0].Role != core.RoleUser || msgs[1].Role != core.RoleAssistant || msgs[1].Parts[0].Text != "Bread is good." {
		t.Errorf("persisted %+v", msgs)
	}
	entries, err := tb.store.GetCrumbs(context.Background(), end.RunID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var logged []string
	for _, e := range entries {
		logged = append(logged, e.Type)
	}
	if strings.Join(logged, ",") != "agent:run:start,text:delta,agent:run:end" {
		t.Errorf("crumb log %v", logged)
	}
}

func TestRunSessions(t *testing.T) {
	tb := newTestbed(t, modeltest.New(modeltest.Text("one"), modeltest.Text("two")), []*core.Agent{textAgent("a")})
	opts := core.RunOptions{Session: core.SessionOptions{ID: "user-42", Tags: map[string]string{"user": "42"}}}
	if _, err := tb.run(t, "a", "first", opts); err != nil {
		t.Fatal(err)
	}
	res, err := tb.in.RunSync(context.Background(), "a", "second", opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.SessionID != "user-42" || res.Output != "two" {
		t.Errorf("result %+v", res)
	}
	second := tb.model.Requests()[1]
	var texts []string
	for _, m := range second.Messages {
		texts = append(texts, string(m.Role)+":"+m.Parts[0].Text)
	}
	if strings.Join(texts, "|") != "user:first|assistant:one|user:second" {
		t.Errorf("history replayed %v", texts)
	}
	s, err := tb.store.GetSession(context.Background(), "user-42")
	if err != nil || s.Tags["user"] != "42" {
		t.Errorf("session %+v %v", s, err)
	}
}

func TestRunFailuresBeforeTheRunStarts(t *testing.T) {
	type in struct {
		Topic string `json:"topic" validate:"required,min=3"`
	}
	typed := typed.DefineAgent[in, string](core.Agent{ID: "typed", Model: mockModel()})
	untyped := &core.Agent{ID: "untyped", Model: mockModel(), InputSchema: json.RawMessage(`{"type":"object","required":["topic"],"properties":{"topic":{"type":"string"}}}`)}
	tb := newTestbed(t, modeltest.New(modeltest.Text("x")), []*core.Agent{typed, untyped})
	tests := []struct {
		name, agent string
		input       any
		code, field string
	}{
		{"unknown agent", "ghost", "hi", core.CodeAgentNotFound, ""},
		{"schema: missing field", "untyped", map[string]any{}, core.CodeValidationError, "/"},
		{"schema: wrong type", "untyped", map[string]any{"topic": 5}, core.CodeValidationError, "/topic"},
		{"typed: tag fails", "typed", map[string]any{"topic": "ab"}, core.CodeValidationError, "topic"},
		{"typed: unknown field", "typed", map[string]any{"topic": "abc", "x": 1}, core.CodeValidationError, ""},
		{"typed: wrong JSON type", "typed", json.RawMessage(`{"topic":5}`), core.CodeValidationError, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := tb.run(t, tt.agent, tt.input, core.RunOptions{})
			wantCode(t, err, tt.code)
			wantTypes(t, cs, core.TypeAgentError)
			ae := cs[0].(*core.AgentError)
			if ae.RunID != "" || ae.AgentID != tt.agent {
				t.Errorf("a run that never started has no run id: %+v", ae.CrumbBase)
			}
			if tt.field != "" && ae.Error.Context["field"] != tt.field {
				t.Errorf("field %v, want %q (%s)", ae.Error.Context["field"], tt.field, ae.Error.Message)
			}
		})
	}
	if tb.model.Calls() != 0 {
		t.Errorf("the model must not be called for invalid input")
	}
	if res, err := tb.in.RunSync(context.Background(), "typed", map[string]any{"topic": "bread"}, core.RunOptions{}); err != nil || res.Output != "x" {
		t.Errorf("valid typed input: %v %v", res, err)
	}
}

func TestRunOutputFormats(t *testing.T) {
	type answer struct {
		Title string   `json:"title" validate:"required"`
		Tags  []string `json:"tags"`
	}
	tests := []struct {
		name   string
		agent  *core.Agent
		turn   modeltest.Turn
		want   string
		code   string
		deltas int
	}{
		{
			name:   "markdown streams text",
			agent:  &core.Agent{ID: "a", Model: mockModel(), Output: core.OutputFormat{Format: core.FormatMarkdown}},
			turn:   modeltest.Text("# Hi"),
			want:   `"# Hi"`,
			deltas: 1,
		},
		{
			name:  "json through structured output, validated",
			agent: &core.Agent{ID: "a", Model: mockModel(), Output: core.OutputFormat{Format: core.FormatJSON}, OutputSchema: json.RawMessage(`{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}`)},
			turn:  modeltest.JSON(json.RawMessage(`{"n":12345678901234567890}`)),
			want:  `{"n":12345678901234567890}`,
		},
		{
			name:  "json failing its schema",
			agent: &core.Agent{ID: "a", Model: mockModel(), Output: core.OutputFormat{Format: core.FormatJSON}, OutputSchema: json.RawMessage(`{"type":"object","required":["n"]}`)},
			turn:  modeltest.JSON(map[string]any{"m": 1}),
			code:  core.CodeValidationError,
		},
		{
			name:  "json that is not JSON",
			agent: &core.Agent{ID: "a", Model: mockModel(), Output: core.OutputFormat{Format: core.FormatJSON}},
			turn:  modeltest.Text("{nope"),
			code:  core.CodeOutputParseError,
		},
		{
			name:  "typed json decodes into the Go type",
			agent: typed.DefineAgent[string, answer](core.Agent{ID: "a", Model: mockModel()}),
			turn:  modeltest.JSON(map[string]any{"title": "Bread", "tags": []string{"food"}}),
			want:  `{"title":"Bread","tags":["food"]}`,
		},
		{
			name:  "typed json failing a tag",
			agent: typed.DefineAgent[string, answer](core.Agent{ID: "a", Model: mockModel()}),
			turn:  modeltest.JSON(map[string]any{"tags": []string{}}),
			code:  core.CodeValidationError,
		},
		{
			name: "custom format parses the streamed text",
			agent: &core.Agent{ID: "a", Model: mockModel(), Output: core.OutputFormat{Format: "lines", Parse: func(s string) (any, error) {
				return strings.Split(s, "\n"), nil
			}}},
			turn:   modeltest.Text("a\nb"),
			want:   `["a","b"]`,
			deltas: 1,
		},
		{
			name: "custom format failing",
			agent: &core.Agent{ID: "a", Model: mockModel(), Output: core.OutputFormat{Format: "lines", Parse: func(string) (any, error) {
				return nil, errors.New("bad lines")
			}}},
			turn: modeltest.Text("x"),
			code: core.CodeOutputParseError,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := newTestbed(t, modeltest.New(tt.turn), []*core.Agent{tt.agent})
			cs, err := tb.run(t, "a", "go", core.RunOptions{})
			if tt.code != "" {
				wantCode(t, err, tt.code)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := asJSON(t, last[*core.AgentRunEnd](t, cs).Output); got != tt.want {
				t.Errorf("output %s, want %s", got, tt.want)
			}
			if n := len(find[*core.TextDelta](cs)); n != tt.deltas {
				t.Errorf("%d text deltas, want %d", n, tt.deltas)
			}
		})
	}
}

func TestRunStructuredOutputAsksForTheSchemaWithoutTools(t *testing.T) {
	tool := typed.DefineTool("noop", "does nothing", func(context.Context, struct{}, core.ToolContext) (string, error) { return "", nil })
	a := &core.Agent{ID: "a", Model: mockModel(), Output: core.OutputFormat{Format: core.FormatJSON}, OutputSchema: json.RawMessage(`{"type":"object"}`), Tools: []core.Tool{tool}}
	tb := newTestbed(t, modeltest.New(modeltest.JSON(map[string]any{})), []*core.Agent{a})
	if _, err := tb.run(t, "a", "x", core.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	req := tb.model.Requests()[0]
	if req.Output == nil || string(req.Output.Schema) != `{"type":"object"}` || len(req.Tools) != 0 {
		t.Errorf("request output %+v tools %d", req.Output, len(req.Tools))
	}
}

func TestRunReasoningAndStreamedToolInput(t *testing.T) {
	tool := typed.DefineTool("lookup", "looks up", func(_ context.Context, a struct {
		Q string `json:"q"`
	}, _ core.ToolContext) (string, error) {
		return "found " + a.Q, nil
	})
	a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{tool}}
	tb := newTestbed(t, modeltest.New(
		modeltest.StreamedToolCall("c1", "tool_lookup", `{"q":`, `"rye"}`),
		modeltest.Reasoning([]string{"hmm"}, "done"),
	), []*core.Agent{a})
	cs, err := tb.run(t, "a", "x", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, cs,
		core.TypeAgentRunStart,
		core.TypeToolInputStart, core.TypeToolInputDelta, core.TypeToolInputDelta, core.TypeToolInputEnd,
		core.TypeToolCall, core.TypeToolResult,
		core.TypeReasoningDelta, core.TypeTextDelta, core.TypeAgentRunEnd)
	if r := last[*core.ToolResult](t, cs); r.Result != "found rye" || r.ToolName != "tool_lookup" {
		t.Errorf("tool result %+v", r)
	}
}

func TestRunStepLimit(t *testing.T) {
	tool := typed.DefineTool("again", "", func(context.Context, struct{}, core.ToolContext) (int, error) { return 1, nil })
	a := &core.Agent{ID: "a", Model: mockModel(), MaxSteps: 3, Tools: []core.Tool{tool}}
	tb := newTestbed(t, modeltest.New(modeltest.ToolCall("tool_again", map[string]any{})), []*core.Agent{a})
	cs, err := tb.run(t, "a", "x", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tb.model.Calls() != 3 || len(find[*core.ToolResult](cs)) != 3 {
		t.Errorf("model calls %d, tool results %d; want 3 and 3", tb.model.Calls(), len(find[*core.ToolResult](cs)))
	}
	if last[*core.AgentRunEnd](t, cs).Output != "" {
		t.Errorf("a run out of steps ends with the text it has")
	}
}

func TestRunProviderResolution(t *testing.T) {
	own := modeltest.New(modeltest.Text("agent's own"))
	global := modeltest.New(modeltest.Text("global"))
	a := &core.Agent{ID: "own", Model: mockModel(), Providers: own.Registry("mock")}
	b := textAgent("global")
	c := &core.Agent{ID: "nope", Model: core.ModelRef{Provider: "openia", Model: "x"}}
	tb := newTestbed(t, global, []*core.Agent{a, b, c}, func(cfg *engine.Config) {
		cfg.Providers["extra"] = cfg.Providers["mock"]
	})
	for agent, want := range map[string]string{"own": "agent's own", "global": "global"} {
		res, err := tb.in.RunSync(context.Background(), agent, "x", core.RunOptions{})
		if err != nil || res.Output != want {
			t.Errorf("%s: %v %v", agent, res.Output, err)
		}
	}
	_, err := tb.run(t, "nope", "x", core.RunOptions{})
	wantCode(t, err, core.CodeUnknownProvider)
	if !strings.Contains(err.Error(), "extra, mock") {
		t.Errorf("UNKNOWN_PROVIDER must name the registered providers: %v", err)
	}
}

func TestRunSyncReturnsTheOutput(t *testing.T) {
	tb := newTestbed(t, modeltest.New(modeltest.Text("ok")), []*core.Agent{textAgent("a")})
	res, err := tb.in.RunSync(context.Background(), "a", map[string]any{"k": 1}, core.RunOptions{})
	if err != nil || res.Output != "ok" || res.RunID == "" || res.SessionID == "" {
		t.Fatalf("%+v %v", res, err)
	}
	if got := tb.model.Requests()[0].Messages[0].Parts[0].Text; got != `{"k":1}` {
		t.Errorf("non-string input reaches the model as JSON, got %q", got)
	}
}
