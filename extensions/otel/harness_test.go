package otel_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/engine"
	breadotel "github.com/breadai/bread/extensions/otel"
)

// rig is an engine with the plugin recording into the SDK's in-memory
// span recorder and a manual metric reader.
type rig struct {
	in     *engine.Instance
	plugin *breadotel.Plugin
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
}

func newRig(t *testing.T, cfg engine.Config) *rig {
	t.Helper()
	r := &rig{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	p, err := breadotel.New(t.Context(), breadotel.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	r.plugin = p
	if cfg.Store == nil {
		cfg.Store = memory.New()
	}
	cfg.Store = p.WrapStore(cfg.Store)
	cfg.Plugins = append(cfg.Plugins, p)
	cfg.Providers = p.WrapProviders(cfg.Providers)
	in, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	r.in = in
	return r
}

// drain runs a stream to its end and returns its crumbs.
func drain(t *testing.T, seq func(func(core.Crumb, error) bool)) []core.Crumb {
	t.Helper()
	var out []core.Crumb
	for c, err := range seq {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		out = append(out, c)
	}
	return out
}

// ended returns the finished spans.
func (r *rig) ended() []sdktrace.ReadOnlySpan { return r.spans.Ended() }

// tree renders the finished spans as an indented tree of names, children
// in start order, so a test can compare the whole shape at once.
func tree(spans []sdktrace.ReadOnlySpan) string {
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanContext().SpanID().String()] = true
	}
	kids := map[string][]sdktrace.ReadOnlySpan{}
	var roots []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if p := s.Parent(); p.IsValid() && ids[p.SpanID().String()] {
			kids[p.SpanID().String()] = append(kids[p.SpanID().String()], s)
		} else {
			roots = append(roots, s)
		}
	}
	// By name, then start: spans made from crumbs (tools) and spans made
	// from the engine's scopes (delegations) start in either order.
	order := func(a, b sdktrace.ReadOnlySpan) int {
		if c := strings.Compare(a.Name(), b.Name()); c != 0 {
			return c
		}
		return a.StartTime().Compare(b.StartTime())
	}
	var b strings.Builder
	var walk func(s sdktrace.ReadOnlySpan, depth int)
	walk = func(s sdktrace.ReadOnlySpan, depth int) {
		b.WriteString(strings.Repeat("  ", depth) + s.Name() + "\n")
		ks := kids[s.SpanContext().SpanID().String()]
		slices.SortFunc(ks, order)
		for _, k := range ks {
			walk(k, depth+1)
		}
	}
	slices.SortFunc(roots, order)
	for _, r := range roots {
		walk(r, 0)
	}
	return b.String()
}

func find(spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	for _, s := range spans {
		if s.Name() == name {
			return s
		}
	}
	return nil
}

func attr(s sdktrace.ReadOnlySpan, key string) any {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.AsInterface()
		}
	}
	return nil
}

func memoryStore() core.BreadStore { return memory.New() }

// gauge sums the data points of an int64 sum (counter or up-down counter).
func (r *rig) gauge(t *testing.T, name string) int64 {
	t.Helper()
	m, ok := r.metrics(t)[name]
	if !ok {
		return 0
	}
	var n int64
	for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
		n += p.Value
	}
	return n
}

// metrics collects the reader's metrics by name.
func (r *rig) metrics(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}
