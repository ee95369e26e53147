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
			return &tracedModel{p: p, inner: m, system: name, model: modelID}, nil
		}
	}
	return out
}

type tracedModel struct {
	p      *Plugin
	inner  core.LanguageModel
	system string
	model  string
}

func (m *tracedModel) Stream(ctx context.Context, req core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	return func(yield func(core.ModelEvent, error) bool) {
		attrs := []attribute.KeyValue{
			AttrGenAIOperation.String("chat"), AttrGenAISystem.String(m.system), AttrGenAIProvider.String(m.system),
			AttrGenAIRequestModel.String(m.model),
		}
		start := time.Now()
		ctx, span := m.p.tracer.Start(ctx, "chat "+m.model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
		if s := req.Settings; s.MaxOutputTokens != nil || s.Temperature != nil {
			if s.MaxOutputTokens != nil {
				span.SetAttributes(attribute.Int("gen_ai.request.max_tokens", *s.MaxOutputTokens))
			}
			if s.Temperature != nil {
				span.SetAttributes(attribute.Float64("gen_ai.request.temperature", *s.Temperature))
			}
		}
		var failed error
		var usage core.Usage
		var finish core.FinishReason
		defer func() {
			if finish != "" {
				span.SetAttributes(AttrGenAIFinish.StringSlice([]string{string(finish)}))
			}
			if usage.InputTokens > 0 || usage.OutputTokens > 0 {
				span.SetAttributes(AttrGenAIInputTokens.Int64(usage.InputTokens), AttrGenAIOutputTokens.Int64(usage.OutputTokens))
			}
			metricAttrs := attrs
			if failed != nil {
				typ := core.AsBreadError(failed, core.CodeProviderError).Code
				span.SetAttributes(AttrErrorType.String(typ))
				span.SetStatus(codes.Error, typ)
				metricAttrs = append(metricAttrs[:len(metricAttrs):len(metricAttrs)], AttrErrorType.String(typ))
			}
			span.End()
			m.p.m.modelTime.Record(context.Background(), time.Since(start).Seconds(), metric.WithAttributes(metricAttrs...))
			if usage.InputTokens > 0 {
				m.p.m.tokens.Record(context.Background(), usage.InputTokens, metric.WithAttributes(append(attrs[:len(attrs):len(attrs)], AttrGenAITokenType.String("input"))...))
			}
			if usage.OutputTokens > 0 {
				m.p.m.tokens.Record(context.Background(), usage.OutputTokens, metric.WithAttributes(append(attrs[:len(attrs):len(attrs)], AttrGenAITokenType.String("output"))...))
			}
		}()
		for ev, err := range m.inner.Stream(ctx, req) {
			if err != nil {
				failed = err
			}
			if ev.Type == core.EventFinish {
				finish, usage = ev.FinishReason, ev.Usage
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}
