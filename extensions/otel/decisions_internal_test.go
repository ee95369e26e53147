package otel

import (
	"context"
	"slices"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/crumbtest"
)

// effect is what one crumb type does to the trace, in a run whose span is
// open and after the crumbs of before: the spans it starts (through the
// engine's ScopeObserver when scope is set, else as a crumb) and ends, the
// events it adds to the run's span, and the run's status when it ends it.
// A crumb with no effect at all is deliberately ignored, for the reason in
// ignored.
type effect struct {
	scope   bool
	before  []string
	started []string
	ended   []string
	events  []string
}

var decisions = map[string]effect{
	core.TypeAgentRunStart:      {scope: true, started: []string{"agent.run"}},
	core.TypeTextDelta:          {},
	core.TypeReasoningDelta:     {},
	core.TypeFileGenerated:      {events: []string{"file.generated"}},
	core.TypeToolCall:           {started: []string{"tool.call.lookup"}},
	core.TypeToolInputStart:     {},
	core.TypeToolInputDelta:     {},
	core.TypeToolInputEnd:       {},
	core.TypeToolResult:         {before: []string{core.TypeToolCall}, ended: []string{"tool.call.lookup"}},
	core.TypeToolResultPartial:  {},
	core.TypeToolError:          {started: []string{"tool.call.fetch"}, ended: []string{"tool.call.fetch"}}, // failed before it started
	core.TypeHumanRequired:      {events: []string{"human.required"}, ended: []string{"agent.run:suspended"}},
	core.TypeHumanResumed:       {},
	core.TypeSubagentRunStart:   {},
	core.TypeSubagentRunEnd:     {ended: []string{"agent.run:completed"}},
	core.TypePipelineStepStart:  {scope: true, started: []string{"pipeline.step.0"}},
	core.TypePipelineStepEnd:    {before: []string{core.TypePipelineStepStart}, ended: []string{"pipeline.step.0:completed"}},
	core.TypeLoopStart:          {started: []string{"loop.run"}},
	core.TypeLoopIterationStart: {started: []string{"loop.iteration.1"}},
	core.TypeLoopIterationEnd:   {before: []string{core.TypeLoopIterationStart}, ended: []string{"loop.iteration.1"}},
	core.TypeLoopEnd:            {before: []string{core.TypeLoopStart}, ended: []string{"loop.run"}},
	core.TypeTaskStart:          {started: []string{"task.extract"}},
	core.TypeTaskEnd:            {before: []string{core.TypeTaskStart}, ended: []string{"task.extract"}},
	core.TypeAgentRunEnd:        {ended: []string{"agent.run:completed"}},
	core.TypeAgentError:         {ended: []string{"agent.run:failed"}},
}

// ignored says why a crumb type leaves the trace as it is.
var ignored = map[string]string{
	core.TypeTextDelta:         "the hot path: text is the model span's output, not an event per delta",
	core.TypeReasoningDelta:    "the hot path, as text",
	core.TypeToolInputStart:    "arguments as they stream: the tool span opens at tool:call",
	core.TypeToolInputDelta:    "arguments as they stream: the tool span opens at tool:call",
	core.TypeToolInputEnd:      "arguments as they stream: the tool span opens at tool:call",
	core.TypeToolResultPartial: "a streaming tool's intermediate value: its span ends at tool:result",
	core.TypeHumanResumed:      "a resumed run's span is opened by the engine's scope, linked to the suspended one; this crumb only marks it resumed (an attribute)",
	core.TypeSubagentRunStart:  "a mediated delegation's run span is opened by the engine's scope; this crumb is its agent:run:start seen from the supervisor",
}

// TestEveryCrumbTypeIsDecided: the table decides every crumb type, and the
// plugin does what it says to the trace, for a crumb as a live run makes it
// and as a crumb log or bus gives it back.
func TestEveryCrumbTypeIsDecided(t *testing.T) {
	crumbtest.CheckDecisions(t, "otel", decisions)
	for _, c := range crumbtest.Samples() {
		typ := c.CrumbType()
		want, ok := decisions[typ]
		if !ok {
			continue
		}
		none := len(want.started)+len(want.ended)+len(want.events) == 0
		if none != (ignored[typ] != "") {
			t.Errorf("%s: a crumb with no effect needs a reason in ignored, and only such a crumb", typ)
		}
		for _, shape := range []struct {
			name string
			c    core.Crumb
		}{{"live", c}, {"decoded", crumbtest.Decoded(t, c)}} {
			got := traceEffect(t, want, shape.c)
			if !slices.Equal(got.started, want.started) || !slices.Equal(got.ended, want.ended) || !slices.Equal(got.events, want.events) {
				t.Errorf("%s (%s): started %v, ended %v, events %v; the table says %v, %v, %v",
					typ, shape.name, got.started, got.ended, got.events, want.started, want.ended, want.events)
			}
		}
	}
}

// traceEffect opens a run's span, passes the crumbs of d.before, then c,
// and returns what c did.
func traceEffect(t *testing.T, d effect, c core.Crumb) effect {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	mp := sdkmetric.NewMeterProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	p, err := New(t.Context(), Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if c.CrumbType() != core.TypeAgentRunStart {
		ctx, _ = p.ObserveScope(ctx, crumbtest.Sample(core.TypeAgentRunStart))
	}
	for _, typ := range d.before {
		if typ == core.TypePipelineStepStart {
			ctx, _ = p.ObserveScope(ctx, crumbtest.Sample(typ))
			continue
		}
		p.onCrumb(ctx, crumbtest.Sample(typ))
	}
	started, ended := len(rec.Started()), len(rec.Ended())
	events := 0
	if s := p.runs[crumbtest.RunID]; s != nil {
		events = len(s.span.(sdktrace.ReadOnlySpan).Events())
	}
	if d.scope {
		_, _ = p.ObserveScope(ctx, c)
	} else {
		p.onCrumb(ctx, c)
	}
	var out effect
	for _, s := range rec.Started()[started:] {
		out.started = append(out.started, s.Name())
	}
	for _, s := range rec.Ended()[ended:] {
		name := s.Name()
		for _, kv := range s.Attributes() {
			if kv.Key == AttrStatus && (name == "agent.run" || strings.HasPrefix(name, "pipeline.step.")) {
				name += ":" + kv.Value.AsString()
			}
		}
		out.ended = append(out.ended, name)
		if s.Name() == "agent.run" {
			for _, e := range s.Events()[events:] {
				out.events = append(out.events, e.Name)
			}
		}
	}
	if s := p.runs[crumbtest.RunID]; s != nil {
		for _, e := range s.span.(sdktrace.ReadOnlySpan).Events()[events:] {
			out.events = append(out.events, e.Name)
		}
	}
	return out
}
