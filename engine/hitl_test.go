package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/typed"
)

func askAgent() *core.Agent {
	return &core.Agent{ID: "publisher", Model: mockModel(), HumanTools: []core.HumanToolDef{
		{Name: "approve_publish", Prompt: "May I publish?", Schema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`)},
	}}
}

// askingAgent is askAgent under another id, with its own model: it asks
// once, then answers with answer.
func askingAgent(id, answer string) *core.Agent {
	a := askAgent()
	a.ID = id
	a.Providers = modeltest.New(modeltest.ToolCall("human_approve_publish", map[string]string{}), modeltest.Text(answer)).Registry("mock")
	return a
}

func suspendOn(t *testing.T, cs []core.Crumb) *core.HumanRequired {
	t.Helper()
	if len(cs) == 0 {
		t.Fatal("no crumbs")
	}
	hr, ok := cs[len(cs)-1].(*core.HumanRequired)
	if !ok {
		t.Fatalf("the stream must end at human:required: %v", types(cs))
	}
	return hr
}

func TestHumanToolSuspendAndResume(t *testing.T) {
	tb := newTestbed(t, modeltest.New(
		modeltest.ToolCall("human_approve_publish", map[string]string{"url": "https://bread.dev"}),
		modeltest.Text("Published."),
	), []*core.Agent{askAgent()})
	var suspends atomic.Int32
	tb.in.On(func(_ context.Context, c core.Crumb) {
		if _, ok := c.(*core.HumanRequired); ok {
			suspends.Add(1)
		}
	})
	cs, err := tb.run(t, "publisher", "publish it", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, cs, core.TypeAgentRunStart, core.TypeHumanRequired)
	hr := suspendOn(t, cs)
	if hr.Kind != core.HumanInput || hr.Prompt != "May I publish?" || hr.ToolName != "human_approve_publish" || hr.Seq != 2 {
		t.Errorf("human:required %+v", hr)
	}
	cont, err := collect(tb.in.Resume(context.Background(), hr.CheckpointID, map[string]any{"ok": true}))
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, cont, core.TypeHumanResumed, core.TypeTextDelta, core.TypeAgentRunEnd)
	if got := [3]int64{cont[0].Base().Seq, cont[1].Base().Seq, cont[2].Base().Seq}; got != [3]int64{3, 3, 5} {
		t.Errorf("the continuation extends the run's seq: %v", got)
	}
	resumed := cont[0].(*core.HumanResumed)
	if resumed.RunID != hr.RunID || resumed.CheckpointID != hr.CheckpointID || resumed.Kind != core.HumanInput {
		t.Errorf("human:resumed %+v", resumed)
	}
	msgs := tb.model.Requests()[1].Messages
	answer := msgs[len(msgs)-1].Parts[0]
	if answer.ToolCallID != "call-human_approve_publish" || string(answer.Output) != `{"ok":true}` {
		t.Errorf("the answer is the pending call's result: %+v", answer)
	}
	if suspends.Load() != 1 {
		t.Errorf("listeners saw %d human:required", suspends.Load())
	}
	if _, err := tb.store.GetCheckpoint(context.Background(), hr.CheckpointID); !errors.Is(err, core.ErrCheckpointNotFound) {
		t.Errorf("a resumed checkpoint is gone: %v", err)
	}
}

func TestApprovalGatedTool(t *testing.T) {
	for _, tt := range []struct {
		name     string
		response any
		ran      bool
		result   string
	}{
		{"approved", map[string]bool{"approved": true}, true, `{"city":"Rome","sky":"sunny"}`},
		{"rejected", map[string]bool{"approved": false}, false, `{"denied":true,"reason":"rejected by human"}`},
		{"a reason with the refusal", map[string]any{"approved": false, "reason": "not today"}, false, `{"denied":true,"reason":"rejected by human"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int32
			tool := weatherTool()
			inner := tool.Execute
			tool.Execute = func(ctx context.Context, raw json.RawMessage, tc core.ToolContext) (any, error) {
				runs.Add(1)
				return inner(ctx, raw, tc)
			}
			var afterRan bool
			tool.Hooks.AfterRun = func(context.Context, core.HookContext, any, any, time.Duration) (*core.AfterRunResult, error) {
				afterRan = true
				return nil, nil
			}
			a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{tool}, Permissions: core.Permissions{Ask: []string{"tool:weather"}}}
			tb := newTestbed(t, modeltest.New(modeltest.ToolCall("tool_weather", cityArgs{City: "Rome"}), modeltest.Text("done")), []*core.Agent{a})
			cs, _ := tb.run(t, "a", "x", core.RunOptions{})
			hr := suspendOn(t, cs)
			cont, err := collect(tb.in.Resume(context.Background(), hr.CheckpointID, tt.response))
			if err != nil {
				t.Fatal(err)
			}
			if tt.ran {
				wantTypes(t, cont, core.TypeHumanResumed, core.TypeToolCall, core.TypeToolResult, core.TypeTextDelta, core.TypeAgentRunEnd)
			} else {
				wantTypes(t, cont, core.TypeHumanResumed, core.TypeTextDelta, core.TypeAgentRunEnd)
			}
			if got := runs.Load() == 1; got != tt.ran || afterRan != tt.ran {
				t.Errorf("tool ran %v (hooks %v), want %v", got, afterRan, tt.ran)
			}
			msgs := tb.model.Requests()[1].Messages
			if got := string(msgs[len(msgs)-1].Parts[0].Output); got != tt.result {
				t.Errorf("result %s, want %s", got, tt.result)
			}
		})
	}
}

func TestResumeRace(t *testing.T) {
	tb := newTestbed(t, modeltest.New(modeltest.ToolCall("human_approve_publish", map[string]string{}), modeltest.Text("ok")), []*core.Agent{askAgent()})
	cs, _ := tb.run(t, "publisher", "x", core.RunOptions{})
	hr := suspendOn(t, cs)
	const n = 12
	var wg sync.WaitGroup
	var wins, losses atomic.Int32
	for range n {
		wg.Go(func() {
			_, err := collect(tb.in.Resume(context.Background(), hr.CheckpointID, okAnswer))
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, core.ErrCheckpointClaimed), errors.Is(err, core.ErrCheckpointNotFound):
				// In flight elsewhere, or already done.
				losses.Add(1)
			default:
				t.Errorf("unexpected error %v", err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 || losses.Load() != n-1 {
		t.Errorf("wins %d, losses %d", wins.Load(), losses.Load())
	}
	msgs := tb.messages(t, hr.SessionID)
	answers := 0
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type == core.PartToolResult {
				answers++
			}
		}
	}
	if answers != 1 {
		t.Errorf("the answer was appended %d times", answers)
	}
}

// keepOpen shares one memory store between instances: Stop closes the
// store, as it must for a real database, but this one stands in for a
// database that outlives the process.
type keepOpen struct{ *memory.Store }

func (keepOpen) Close() error { return nil }

func TestResumeAfterRestart(t *testing.T) {
	store := keepOpen{memory.New()}
	var toolRuns atomic.Int32
	counted := typed.DefineTool("lookup", "", func(context.Context, struct{}, core.ToolContext) (string, error) {
		toolRuns.Add(1)
		return "looked up", nil
	})
	agent := func() *core.Agent {
		a := askAgent()
		a.Tools = []core.Tool{counted}
		return a
	}
	newInstance := func(model *modeltest.Model) *engine.Instance {
		in, err := engine.New(engine.Config{Store: store, Agents: []*core.Agent{agent()}, Providers: model.Registry("mock")})
		if err != nil {
			t.Fatal(err)
		}
		if err := in.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return in
	}
	a := newInstance(modeltest.New(
		modeltest.ToolCalls(modeltest.Call{ID: "t1", Name: "tool_lookup", Args: struct{}{}}, modeltest.Call{ID: "h1", Name: "human_approve_publish", Args: map[string]string{"url": "x"}}),
	))
	cs, err := collect(a.Run(context.Background(), "publisher", "go", core.RunOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, cs, core.TypeAgentRunStart, core.TypeToolCall, core.TypeToolResult, core.TypeHumanRequired)
	hr := suspendOn(t, cs)
	_ = a.Stop(context.Background())

	bModel := modeltest.New(modeltest.Text("Published after restart."))
	b := newInstance(bModel)
	defer b.Stop(context.Background())
	cont, err := collect(b.Resume(context.Background(), hr.CheckpointID, okAnswer))
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, cont, core.TypeHumanResumed, core.TypeTextDelta, core.TypeAgentRunEnd)
	if cont[0].Base().Seq != hr.Seq+1 {
		t.Errorf("seq continues across instances: %d after %d", cont[0].Base().Seq, hr.Seq)
	}
	if toolRuns.Load() != 1 {
		t.Errorf("a tool that ran before the suspension ran again: %d runs", toolRuns.Load())
	}
	var roles []string
	for _, m := range bModel.Requests()[0].Messages {
		var kinds []string
		for _, p := range m.Parts {
			kinds = append(kinds, string(p.Type))
		}
		roles = append(roles, string(m.Role)+"("+strings.Join(kinds, "+")+")")
	}
	want := []string{"user(text)", "assistant(tool-call+tool-call)", "tool(tool-result)", "tool(tool-result)"}
	if !slices.Equal(roles, want) {
		t.Errorf("replayed history %v, want %v", roles, want)
	}
	entries, _ := store.GetCrumbs(context.Background(), hr.RunID, 0, 0)
	var logged []string
	for _, e := range entries {
		logged = append(logged, e.Type)
	}
	wantLog := []string{"agent:run:start", "tool:call", "tool:result", "human:required", "human:resumed", "text:delta", "agent:run:end"}
	if !slices.Equal(logged, wantLog) {
		t.Errorf("the run's log spans both instances: %v", logged)
	}
}

func TestResumeErrors(t *testing.T) {
	tb := newTestbed(t, modeltest.New(), []*core.Agent{askAgent()})
	_, err := collect(tb.in.Resume(context.Background(), "nope", "x"))
	wantCode(t, err, core.CodeCheckpointNotFound)
}

func TestSkillIsRestoredOnResume(t *testing.T) {
	cite := typed.DefineTool("cite", "", func(context.Context, struct{}, core.ToolContext) (string, error) { return "[1]", nil })
	a := askAgent()
	a.Skills = []core.Skill{{ID: "deep_research", Name: "Deep Research", Instructions: "Cite sources.", Tools: []core.Tool{cite}}}
	tb := newTestbed(t, modeltest.New(
		modeltest.ToolCall("human_approve_publish", map[string]string{}),
		modeltest.ToolCall("skill_deep_research_cite", struct{}{}),
		modeltest.Text("done"),
	), []*core.Agent{a})
	cs, _ := tb.run(t, "publisher", "x", core.RunOptions{Skill: "deep_research"})
	hr := suspendOn(t, cs)
	if start := cs[0].(*core.AgentRunStart); start.Skill != "deep_research" {
		t.Errorf("agent:run:start skill %q", start.Skill)
	}
	cont, err := collect(tb.in.Resume(context.Background(), hr.CheckpointID, okAnswer))
	if err != nil {
		t.Fatal(err)
	}
	if r := last[*core.ToolResult](t, cont); r.ToolName != "skill_deep_research_cite" {
		t.Errorf("the skill's tool works after resume: %+v", r)
	}
	if sys := tb.model.Requests()[1].System; !strings.Contains(sys, "## Skill: Deep Research") {
		t.Errorf("the skill's prompt is restored: %q", sys)
	}
}

// okAnswer is a valid answer to askAgent's human tool (an object).
var okAnswer = map[string]any{"url": "https://bread.dev"}

// TestMalformedAnswersKeepTheCheckpoint: an approval that is not
// {"approved": bool} and an answer that does not match the human tool's
// schema are refused before the checkpoint is claimed; a valid answer then
// resumes the same checkpoint.
func TestMalformedAnswersKeepTheCheckpoint(t *testing.T) {
	gated := &core.Agent{ID: "g", Model: mockModel(), Tools: []core.Tool{weatherTool()}, Permissions: core.Permissions{Ask: []string{"tool:weather"}}}
	tb := newTestbed(t, modeltest.New(
		modeltest.ToolCall("tool_weather", cityArgs{City: "Rome"}), modeltest.Text("done"),
		modeltest.ToolCall("human_approve_publish", map[string]string{}), modeltest.Text("Published."),
	), []*core.Agent{gated, askAgent()})

	cs, _ := tb.run(t, "g", "x", core.RunOptions{})
	hr := suspendOn(t, cs)
	for _, bad := range []any{map[string]any{}, "yes", map[string]any{"approved": "true"}, 42, map[string]any{"approved": true, "extra": 1}, nil} {
		_, err := collect(tb.in.Resume(context.Background(), hr.CheckpointID, bad))
		wantCode(t, err, core.CodeValidationError)
	}
	if _, err := collect(tb.in.Resume(context.Background(), hr.CheckpointID, map[string]bool{"approved": true})); err != nil {
		t.Fatalf("a valid approval after the refusals: %v", err)
	}

	cs, _ = tb.run(t, "publisher", "x", core.RunOptions{})
	hr = suspendOn(t, cs)
	for _, bad := range []any{"ok", 42, map[string]any{"url": 7}} {
		_, err := collect(tb.in.Resume(context.Background(), hr.CheckpointID, bad))
		wantCode(t, err, core.CodeValidationError)
	}
	if _, err := collect(tb.in.Resume(context.Background(), hr.CheckpointID, okAnswer)); err != nil {
		t.Fatalf("a valid answer after the refusals: %v", err)
	}
}
