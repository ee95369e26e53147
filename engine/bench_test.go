package engine_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/typed"
)

// BenchmarkChokePoint measures the per-crumb cost of the choke point on its
// hot path: seq, log enqueue, one listener and publish on the embedded
// transport, over the memory store. The crumb's own allocation is counted.
func BenchmarkChokePoint(b *testing.B) {
	const runLength = 500
	for _, bc := range []struct {
		name  string
		delta bool
	}{{"durable", false}, {"delta", true}} {
		b.Run(bc.name, func(b *testing.B) {
			in, err := engine.New(engine.Config{Store: memory.New()})
			if err != nil {
				b.Fatal(err)
			}
			var seen int
			in.On(func(context.Context, core.Crumb) { seen++ })
			ctx := context.Background()
			cp := in.NewChokePointForTest(ctx)
			base := core.CrumbBase{AgentID: "agent", SessionID: "session-1", Timestamp: 1}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				// A realistic run has hundreds of crumbs, not millions: start a
				// new run every runLength crumbs so the store's per-run log
				// stays run-sized.
				if n%runLength == 0 {
					base.RunID = "run-" + strconv.Itoa(n/runLength)
					cp.Process(ctx, &core.AgentRunStart{CrumbBase: base})
				}
				n++
				if bc.delta {
					cp.Process(ctx, &core.TextDelta{CrumbBase: base, Delta: "x"})
				} else {
					cp.Process(ctx, &core.ToolInputEnd{CrumbBase: base, ToolCallID: "call-1"})
				}
			}
			b.StopTimer()
			cp.Finish()
			if seen == 0 {
				b.Fatal("listener never called")
			}
		})
	}
}

// BenchmarkRunTrivial is a whole run with one text delta: session, history,
// model call, persistence, and every crumb through the choke point.
func BenchmarkRunTrivial(b *testing.B) {
	model := modeltest.New(modeltest.Text("hi"))
	in := benchInstance(b, model, &core.Agent{ID: "a", Model: core.ModelRef{Provider: "mock", Model: "m"}})
	loopRuns(b, in)
}

// BenchmarkRunTools is a run of three model turns calling five tools (two,
// then three in parallel), then answering.
func BenchmarkRunTools(b *testing.B) {
	type args struct {
		N int `json:"n"`
	}
	double := typed.DefineTool("double", "doubles", func(_ context.Context, a args, _ core.ToolContext) (int, error) { return a.N * 2, nil })
	model := modeltest.New()
	in := benchInstance(b, model, &core.Agent{ID: "a", Model: core.ModelRef{Provider: "mock", Model: "m"}, Tools: []core.Tool{double}})
	calls := func(ids ...string) modeltest.Turn {
		cs := make([]modeltest.Call, len(ids))
		for i, id := range ids {
			cs[i] = modeltest.Call{ID: id, Name: "tool_double", Args: args{N: i}}
		}
		return modeltest.ToolCalls(cs...)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		*model = *modeltest.New(calls("a", "b"), calls("c", "d", "e"), modeltest.Text("done"))
		b.StartTimer()
		for _, err := range in.Run(ctx, "a", "go", core.RunOptions{}) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRunBuiltinTools is a one-turn run of an agent that has its own
// tool, the knowledge and document tools and a task: what assembling a
// toolset costs on every run, beside BenchmarkRunTrivial.
func BenchmarkRunBuiltinTools(b *testing.B) {
	type args struct {
		N int `json:"n" validate:"min=0"`
	}
	double := typed.DefineTool("double", "doubles", func(_ context.Context, a args, _ core.ToolContext) (int, error) { return a.N * 2, nil })
	model := modeltest.New(modeltest.Text("hi"))
	agent := &core.Agent{
		ID: "a", Model: core.ModelRef{Provider: "mock", Model: "m"}, Tools: []core.Tool{double},
		Knowledge: &core.KnowledgeConfig{}, Documents: &core.DocumentConfig{}, Tasks: []string{"summarise"},
	}
	in, err := engine.New(engine.Config{
		Store: memory.New(), Agents: []*core.Agent{agent}, Providers: model.Registry("mock"),
		Tasks: []*core.Task{{Name: "summarise", Model: core.ModelRef{Provider: "mock", Model: "m"}, InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)}},
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := in.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = in.Stop(context.Background()) })
	loopRuns(b, in)
}

// loopRuns runs agent "a" on "hello" once per benchmark iteration.
func loopRuns(b *testing.B, in *engine.Instance) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		for _, err := range in.Run(ctx, "a", "hello", core.RunOptions{}) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

func benchInstance(b *testing.B, model *modeltest.Model, agents ...*core.Agent) *engine.Instance {
	b.Helper()
	in, err := engine.New(engine.Config{Store: memory.New(), Agents: agents, Providers: model.Registry("mock")})
	if err != nil {
		b.Fatal(err)
	}
	if err := in.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = in.Stop(context.Background()) })
	return in
}
