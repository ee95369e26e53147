package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/typed"
)

type extractArgs struct {
	Text string `json:"text" validate:"required"`
}

type entities struct {
	Entities []string `json:"entities"`
}

func extractTask(m *modeltest.Model) *core.Task {
	return typed.DefineTask[extractArgs, entities](core.Task{
		Name: "extract", Description: "Extract entities", Instructions: "List the entities.",
		Model: core.ModelRef{Provider: "tasks", Model: "small"}, Providers: m.Registry("tasks"),
	})
}

func TestTaskToolInsideARun(t *testing.T) {
	tm := modeltest.New(modeltest.JSON(entities{Entities: []string{"Ada", "Rome"}}))
	a := &core.Agent{ID: "a", Model: mockModel(), Tasks: []string{"extract"}}
	tb := newTestbed(t, modeltest.New(modeltest.ToolCall("task_extract", extractArgs{Text: "Ada went to Rome"}), modeltest.Text("done")), []*core.Agent{a}, func(c *engine.Config) {
		c.Tasks = []*core.Task{extractTask(tm)}
	})
	cs, err := tb.run(t, "a", "x", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, cs, core.TypeAgentRunStart, core.TypeToolCall, core.TypeTaskStart, core.TypeTaskEnd, core.TypeToolResult, core.TypeTextDelta, core.TypeAgentRunEnd)
	end := last[*core.TaskEnd](t, cs)
	if end.Status != core.TaskCompleted || end.Usage == nil || end.TaskID != "extract" || end.RunID != cs[0].Base().RunID {
		t.Errorf("task:end %+v", end)
	}
	if start := last[*core.TaskStart](t, cs); start.Model.Model != "small" {
		t.Errorf("task:start %+v", start)
	}
	if got := asJSONString(last[*core.ToolResult](t, cs).Result); got != `{"entities":["Ada","Rome"]}` {
		t.Errorf("result %s", got)
	}
	req := tm.Requests()[0]
	if req.Output == nil || !strings.Contains(string(req.Output.Schema), "entities") || req.System != "List the entities." || !strings.Contains(req.Messages[0].Parts[0].Text, "Ada went to Rome") {
		t.Errorf("task request %+v", req)
	}
	runs, _ := tb.store.ListTaskRuns(context.Background(), core.TaskRunFilter{TaskID: "extract"})
	if len(runs) != 1 || runs[0].Status != core.TaskCompleted || runs[0].RunID != end.RunID || string(runs[0].Output) != `{"entities":["Ada","Rome"]}` {
		t.Errorf("audit %+v", runs)
	}
}

func TestRunTaskStandalone(t *testing.T) {
	tm := modeltest.New(modeltest.Fail(errors.New("flaky")), modeltest.JSON(entities{Entities: []string{"x"}}))
	task := extractTask(tm)
	task.ErrorHandling.Retry = &core.RetryPolicy{Attempts: 2, BackoffMs: 1}
	var scopes []string
	task.Hooks.AfterRun = func(_ context.Context, hc core.HookContext, _, out any, _ time.Duration) (*core.AfterRunResult, error) {
		scopes = append(scopes, string(hc.Scope)+":"+hc.TaskName)
		if hc.Store == nil {
			return nil, errors.New("task hooks get the store")
		}
		return &core.AfterRunResult{Output: map[string]any{"wrapped": out}}, nil
	}
	tb := newTestbed(t, modeltest.New(), nil, func(c *engine.Config) { c.Tasks = []*core.Task{task} })
	var crumbs int
	tb.in.On(func(context.Context, core.Crumb) { crumbs++ })
	out, err := tb.in.RunTask(context.Background(), "extract", map[string]any{"text": "t"}, engine.TaskOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if asJSONString(out) != `{"wrapped":{"entities":["x"]}}` || crumbs != 0 || len(scopes) != 1 || scopes[0] != "task:extract" {
		t.Errorf("out %s, crumbs %d, scopes %v", asJSONString(out), crumbs, scopes)
	}
	runs, _ := tb.store.ListTaskRuns(context.Background(), core.TaskRunFilter{})
	if len(runs) != 2 || runs[0].RunID != "" {
		t.Errorf("two audited attempts, standalone (no run): %+v", runs)
	}
	_, err = tb.in.RunTask(context.Background(), "nope", nil, engine.TaskOptions{})
	wantCode(t, err, core.CodeTaskNotFound)
	_, err = tb.in.RunTask(context.Background(), "extract", map[string]any{}, engine.TaskOptions{})
	wantCode(t, err, core.CodeValidationError)
}

func TestUnknownTaskFailsTheBoot(t *testing.T) {
	_, err := engine.New(engine.Config{Store: newTestbed(t, modeltest.New(), nil).store, Agents: []*core.Agent{{ID: "a", Tasks: []string{"ghost"}}}})
	wantCode(t, err, core.CodeTaskNotFound)
}

func TestSkills(t *testing.T) {
	cite := typed.DefineTool("cite", "", func(context.Context, struct{}, core.ToolContext) (string, error) { return "[1]", nil })
	skills := []core.Skill{
		{ID: "deep_research", Name: "Deep Research", Description: "Research with citations.", Instructions: "Cite.", Tools: []core.Tool{cite},
			References: []core.SkillReference{{Name: "style.md", Content: "Use footnotes."}}},
		{ID: "brief", Name: "Brief", Description: "Be brief.", Instructions: "Short answers."},
	}
	t.Run("caller-driven", func(t *testing.T) {
		a := &core.Agent{ID: "a", Model: mockModel(), Prompt: "Base.", Skills: skills}
		tb := newTestbed(t, modeltest.New(modeltest.ToolCall("skill_deep_research_cite", struct{}{}), modeltest.Text("ok")), []*core.Agent{a})
		if _, err := tb.run(t, "a", "x", core.RunOptions{Skill: "deep_research"}); err != nil {
			t.Fatal(err)
		}
		req := tb.model.Requests()[0]
		for _, want := range []string{"Base.", "## Skill: Deep Research", "Cite.", "### Reference: style.md", "Use footnotes.", "## Available Skills", "- brief: Be brief."} {
			if !strings.Contains(req.System, want) {
				t.Errorf("system prompt lacks %q:\n%s", want, req.System)
			}
		}
		var names []string
		for _, s := range req.Tools {
			names = append(names, s.Name)
		}
		if strings.Join(names, ",") != "core_load_skill,skill_deep_research_cite" {
			t.Errorf("tools %v", names)
		}
		_, err := tb.run(t, "a", "x", core.RunOptions{Skill: "missing"})
		wantCode(t, err, core.CodeSkillNotFound)
	})
	t.Run("agent-driven", func(t *testing.T) {
		a := &core.Agent{ID: "a", Model: mockModel(), Skills: skills}
		tb := newTestbed(t, modeltest.New(
			modeltest.ToolCall("core_load_skill", map[string]string{"skillId": "deep_research"}),
			modeltest.ToolCall("skill_deep_research_cite", struct{}{}),
			modeltest.Text("ok"),
		), []*core.Agent{a})
		cs, err := tb.run(t, "a", "x", core.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		reqs := tb.model.Requests()
		if len(reqs[0].Tools) != 1 || strings.Contains(reqs[0].System, "## Skill:") {
			t.Errorf("before loading: tools %v", reqs[0].Tools)
		}
		if len(reqs[1].Tools) != 2 || !strings.Contains(reqs[1].System, "## Skill: Deep Research") {
			t.Errorf("after loading, the skill's tools and prompt join: %v", reqs[1].Tools)
		}
		results := find[*core.ToolResult](cs)
		if len(results) != 2 || results[1].Result != "[1]" {
			t.Errorf("results %+v", results)
		}
	})
	t.Run("no skills, no core_load_skill", func(t *testing.T) {
		tb := newTestbed(t, modeltest.New(modeltest.Text("x")), []*core.Agent{textAgent("a")})
		_, _ = tb.run(t, "a", "x", core.RunOptions{})
		if len(tb.model.Requests()[0].Tools) != 0 || strings.Contains(tb.model.Requests()[0].System, "Skills") {
			t.Errorf("an agent without skills gets neither the tool nor the summary")
		}
	})
}

func TestDecideTool(t *testing.T) {
	a := &core.Agent{ID: "a", Model: mockModel()}
	tb := newTestbed(t, modeltest.New(
		modeltest.ToolCall("core_decide", map[string]any{"decider": "triage", "prompt": "Which?", "options": []string{"yes", "no"}}),
		modeltest.ToolCall("core_decide", map[string]any{"decider": "ghost", "prompt": "Which?", "options": []string{"yes"}}),
		modeltest.Text("ok"),
	), []*core.Agent{a}, func(c *engine.Config) { c.Decisions = map[string]core.Decider{"triage": fixedDecider{"yes"}} })
	cs, err := tb.run(t, "a", "x", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := last[*core.ToolResult](t, cs); asJSONString(r.Result) != `{"choice":"yes","confidence":0.9}` {
		t.Errorf("decision %s", asJSONString(r.Result))
	}
	if te := last[*core.ToolError](t, cs); te.Error.Code != core.CodeDeciderNotFound || !strings.Contains(te.Error.Message, "triage") {
		t.Errorf("unknown decider %+v", te.Error)
	}
	var spec core.ToolSpec
	for _, s := range tb.model.Requests()[0].Tools {
		if s.Name == "core_decide" {
			spec = s
		}
	}
	var schema map[string]any
	if json.Unmarshal(spec.InputSchema, &schema) != nil || !strings.Contains(spec.Description, "triage") {
		t.Errorf("core_decide spec %+v", spec)
	}
}
