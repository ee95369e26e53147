package otel_test

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	breadotel "github.com/breadai/bread/extensions/otel"
)

// discard is a span exporter that drops everything: the SDK does all its
// work (spans recorded, batched, handed over) and nothing leaves.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// benchInstance is the engine's BenchmarkRunTrivial setup (one agent, one
// text turn, memory store), with the plugin on a no-op exporter or without.
func benchInstance(b *testing.B, withOtel bool) *engine.Instance {
	b.Helper()
	model := modeltest.New(modeltest.Text("hi"))
	cfg := engine.Config{Store: memory.New(), Providers: model.Registry("mock"),
		Agents: []*core.Agent{{ID: "a", Model: core.ModelRef{Provider: "mock", Model: "m"}}}}
	if withOtel {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
		p, err := breadotel.New(context.Background(), breadotel.Options{TracerProvider: tp, MeterProvider: mp})
		if err != nil {
			b.Fatal(err)
		}
		cfg.Plugins = []core.BreadPlugin{p}
		cfg.Providers = p.WrapProviders(cfg.Providers)
	}
	in, err := engine.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := in.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = in.Stop(context.Background()) })
	return in
}

func runOnce(b *testing.B, in *engine.Instance) {
	for _, err := range in.Run(context.Background(), "a", "hello", core.RunOptions{}) {
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunTrivial is the engine's trivial run (session, history, one
// model call, persistence, every crumb through the choke point) without
// the plugin (off), with it on a no-op exporter (on), and both alternating
// in one loop (ratio), which reports on/off so machine noise hits both
// sides alike.
func BenchmarkRunTrivial(b *testing.B) {
	b.Run("off", func(b *testing.B) {
		in := benchInstance(b, false)
		b.ReportAllocs()
		for b.Loop() {
			runOnce(b, in)
		}
	})
	b.Run("on", func(b *testing.B) {
		in := benchInstance(b, true)
		b.ReportAllocs()
		for b.Loop() {
			runOnce(b, in)
		}
	})
	b.Run("ratio", func(b *testing.B) {
		off, on := benchInstance(b, false), benchInstance(b, true)
		var tOff, tOn time.Duration
		n := 0
		for b.Loop() {
			t0 := time.Now()
			runOnce(b, off)
			t1 := time.Now()
			runOnce(b, on)
			tOn += time.Since(t1)
			tOff += t1.Sub(t0)
			n++
		}
		b.ReportMetric(float64(tOff.Nanoseconds())/float64(n), "off-ns/run")
		b.ReportMetric(float64(tOn.Nanoseconds())/float64(n), "on-ns/run")
		b.ReportMetric(float64(tOn)/float64(tOff), "on/off")
	})
}
