package otel

import (
	"context"
	"iter"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/breadai/bread/core"
)

// WrapProviders returns a registry whose models trace every call: a client
// span "chat <model>" (GenAI semantic conventions: gen_ai.system,
// gen_ai.request.model, token usage, finish reasons) as a child of the run
// calling it, and the model latency and token metrics. Pass the result as
// engine.Config.Providers.
func (p *Plugin) WrapProviders(reg core.ProviderRegistry) core.ProviderRegistry {
	out := make(core.ProviderRegistry, len(reg))
	for name, f := range reg {
		if f == nil {
			out[name] = nil
			continue
		}
		out[name] = func(modelID string) (core.LanguageModel, error) {
			m, err := f(modelID)
			if err != nil || m == nil {
				return m, err
			}
			return &tracedModel{p: p, inner: m, model: modelID, a: p.modelAttrs(name, modelID)}, nil
		}
	}
	return out
}

type tracedModel struct {
	p     *Plugin
	inner core.LanguageModel
	model string
	a     *modelAttrs
}

// modelAttrs are a model's span attributes and metric options, built once
// per provider and model.
type modelAttrs struct {
	span          trace.SpanStartOption
	name          string
	ok            metric.MeasurementOption
	input, output metric.MeasurementOption
	base          []attribute.KeyValue
}

func (p *Plugin) modelAttrs(system, model string) *modelAttrs {
	key := system + "\x00" + model
	if v, ok := p.models.Load(key); ok {
		return v.(*modelAttrs)
	}
	base := []attribute.KeyValue{
		AttrGenAIOperation.String("chat"), AttrGenAISystem.String(system), AttrGenAIProvider.String(system),
		AttrGenAIRequestModel.String(model),
	}
	with := func(kv attribute.KeyValue) metric.MeasurementOption {
		return metric.WithAttributes(append(base[:len(base):len(base)], kv)...)
	}
	a := &modelAttrs{
		span: trace.WithAttributes(base...), name: "chat " + model, base: base,
		ok: metric.WithAttributes(base...), input: with(AttrGenAITokenType.String("input")), output: with(AttrGenAITokenType.String("output")),
	}
	v, _ := p.models.LoadOrStore(key, a)
	return v.(*modelAttrs)
}

var clientKind = trace.WithSpanKind(trace.SpanKindClient)

func (m *tracedModel) Stream(ctx context.Context, req core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	return func(yield func(core.ModelEvent, error) bool) {
		var c modelCall
		c.start = time.Now()
		ctx, c.span = m.p.tracer.Start(ctx, m.a.name, clientKind, m.a.span)
		if s := req.Settings; s.MaxOutputTokens != nil {
			c.span.SetAttributes(attribute.Int("gen_ai.request.max_tokens", *s.MaxOutputTokens))
		}
		if s := req.Settings; s.Temperature != nil {
			c.span.SetAttributes(attribute.Float64("gen_ai.request.temperature", *s.Temperature))
		}
		defer m.end(&c)
		for ev, err := range m.inner.Stream(ctx, req) {
			if err != nil {
				c.failed = err
			}
			if ev.Type == core.EventFinish {
				c.finish, c.usage = ev.FinishReason, ev.Usage
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// modelCall is what one model call's span learns as the stream goes.
type modelCall struct {
	span   trace.Span
	start  time.Time
	failed error
	usage  core.Usage
	finish core.FinishReason
}

// end ends a model call's span and records its metrics.
func (m *tracedModel) end(c *modelCall) {
	a := m.a
	if c.finish != "" {
		c.span.SetAttributes(AttrGenAIFinish.StringSlice([]string{string(c.finish)}))
	}
	if c.usage.InputTokens > 0 || c.usage.OutputTokens > 0 {
		c.span.SetAttributes(AttrGenAIInputTokens.Int64(c.usage.InputTokens), AttrGenAIOutputTokens.Int64(c.usage.OutputTokens))
	}
	outcome := a.ok
	if c.failed != nil {
		typ := core.AsBreadError(c.failed, core.CodeProviderError).Code
		c.span.SetAttributes(AttrErrorType.String(typ))
		c.span.SetStatus(codes.Error, typ)
		outcome = metric.WithAttributes(append(a.base[:len(a.base):len(a.base)], AttrErrorType.String(typ))...)
	}
	c.span.End()
	m.p.m.modelTime.Record(context.Background(), time.Since(c.start).Seconds(), outcome)
	if c.usage.InputTokens > 0 {
		m.p.m.tokens.Record(context.Background(), c.usage.InputTokens, a.input)
	}
	if c.usage.OutputTokens > 0 {
		m.p.m.tokens.Record(context.Background(), c.usage.OutputTokens, a.output)
	}
}
