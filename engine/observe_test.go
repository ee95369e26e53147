package engine_test

import (
	"context"
	"iter"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/typed"
)

type scopeKey struct{}

// scopes records what the engine tells a ScopeObserver and marks each
// scope's context with its description.
type scopes struct {
	mu     sync.Mutex
	opened []string
	ended  []string
}

func (s *scopes) Name() string { return "scopes" }

func (s *scopes) ObserveScope(ctx context.Context, c core.Crumb) (context.Context, func()) {
	name := c.CrumbType() + " " + c.Base().AgentID
	if st, ok := c.(*core.PipelineStepStart); ok {
		name = "step " + st.PipelineID
	}
	s.mu.Lock()
	s.opened = append(s.opened, name)
	s.mu.Unlock()
	return context.WithValue(ctx, scopeKey{}, name), func() {
		s.mu.Lock()
		s.ended = append(s.ended, name)
		s.mu.Unlock()
	}
}

// ctxModel answers with the scope and run its context carries.
type ctxModel struct{}

func (ctxModel) Stream(ctx context.Context, _ core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	return func(yield func(core.ModelEvent, error) bool) {
		scope, _ := ctx.Value(scopeKey{}).(string)
		ri, _ := engine.RunFromContext(ctx)
		if yield(core.ModelEvent{Type: core.EventTextDelta, Delta: scope + "|" + ri.AgentID}, nil) {
			yield(modeltest.Finish(core.FinishStop), nil)
		}
	}
}

func TestScopeObserverWrapsRunsAndSteps(t *testing.T) {
	obs := &scopes{}
	in, err := engine.New(engine.Config{
		Store:     memory.New(),
		Providers: core.ProviderRegistry{"ctx": func(string) (core.LanguageModel, error) { return ctxModel{}, nil }},
		Agents: []*core.Agent{
			{ID: "a", Model: core.ModelRef{Provider: "ctx", Model: "m"}},
			{ID: "b", Model: core.ModelRef{Provider: "ctx", Model: "m"}},
		},
		Pipelines: map[string][]core.PipelineStep{"p": {{AgentID: "a"}, {AgentID: "b"}}},
		Plugins:   []core.BreadPlugin{obs},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer in.Stop(context.Background())
	var outputs []any
	for c, err := range in.RunPipeline(t.Context(), "p", "go") {
		if err != nil {
			t.Fatal(err)
		}
		if end, ok := c.(*core.AgentRunEnd); ok {
			outputs = append(outputs, end.Output)
		}
	}
	// The model of each run sees the run's scope, nested in its step's.
	if len(outputs) != 2 || outputs[0] != "agent:run:start a|a" || outputs[1] != "agent:run:start b|b" {
		t.Errorf("outputs %v", outputs)
	}
	want := []string{"step p", "agent:run:start a", "step p", "agent:run:start b"}
	if !equal(obs.opened, want) {
		t.Errorf("opened %v, want %v", obs.opened, want)
	}
	if len(obs.ended) != 4 {
		t.Errorf("ended %v", obs.ended)
	}
}

func TestRunFromContextReachesTools(t *testing.T) {
	type none struct{}
	var got engine.RunInfo
	tool := typed.DefineTool("who", "Who runs me.", func(ctx context.Context, _ none, tc core.ToolContext) (string, error) {
		got, _ = engine.RunFromContext(ctx)
		return "ok", nil
	})
	model := modeltest.New(modeltest.ToolCall("tool_who", map[string]any{}), modeltest.Text("done"))
	in, err := engine.New(engine.Config{Store: memory.New(), Providers: model.Registry("m"),
		Agents: []*core.Agent{{ID: "a", Model: core.ModelRef{Provider: "m", Model: "x"}, Tools: []core.Tool{tool}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer in.Stop(context.Background())
	res, err := in.RunSync(t.Context(), "a", "hi", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.RunID != res.RunID || got.SessionID != res.SessionID || got.AgentID != "a" {
		t.Errorf("the tool saw %+v, the run was %s in %s", got, res.RunID, res.SessionID)
	}
	if _, ok := engine.RunFromContext(context.Background()); ok {
		t.Error("a bare context names a run")
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
