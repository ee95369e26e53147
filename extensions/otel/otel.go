package otel

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/breadai/bread/core"
)

// ScopeName is the instrumentation scope of the plugin's tracer and meter.
const ScopeName = "github.com/breadai/bread/extensions/otel"

// Options configure the plugin. The zero value exports nothing unless the
// OTEL_* environment variables ask for an exporter.
type Options struct {
	// ServiceName is the service.name resource attribute (default
	// OTEL_SERVICE_NAME, else "bread").
	ServiceName string `json:"serviceName"`
	// Traces and Metrics choose the exporters when TracerProvider or
	// MeterProvider are not given.
	Traces  Exporter `json:"traces"`
	Metrics Exporter `json:"metrics"`
	// SetGlobal registers the providers and the propagator as
	// OpenTelemetry's globals, for libraries that use them. Off by default.
	SetGlobal bool `json:"setGlobal"`

	// TracerProvider and MeterProvider, when set, are used as they are and
	// never shut down by the plugin: the program owns them (tests pass the
	// SDK's in-memory exporter here).
	TracerProvider trace.TracerProvider `json:"-"`
	MeterProvider  metric.MeterProvider `json:"-"`
	// Propagator carries trace context across HTTP (default W3C
	// traceparent/tracestate and baggage).
	Propagator propagation.TextMapPropagator `json:"-"`
	// LookupEnv reads OTEL_* variables (default os.LookupEnv).
	LookupEnv func(string) (string, bool) `json:"-"`
	// Stdout is where the stdout exporters write (default os.Stdout).
	Stdout io.Writer `json:"-"`
}

// Plugin is the bread plugin. Create it with New; it is safe for concurrent
// use.
type Plugin struct {
	tracer     trace.Tracer
	prop       propagation.TextMapPropagator
	m          *instruments
	shutdown   []func(context.Context) error
	scrape     *scrape // the Prometheus endpoint, when metrics are pulled
	rt         core.Runtime
	removeOnce sync.Once
	remove     func()

	mu        sync.Mutex
	runs      map[string]*scope // open run scopes by run id
	steps     map[string]*scope // open pipeline step scopes by step run id
	tools     map[string]*child // open tool spans by run id + call id
	loops     map[string]*child // open loop and iteration spans
	tasks     map[string]*child // open task spans by task run id
	suspended *spanRing         // span contexts of suspended runs, for the resumed run's link

	// Metric attribute sets, built once per distinct value: building one
	// allocates, and runs repeat the same few.
	attrSets sync.Map // string -> metric.MeasurementOption
	models   sync.Map // provider + "\x00" + model -> *modelAttrs
}

// measurement returns the cached metric option for key, built by mk.
func (p *Plugin) measurement(key string, mk func() metric.MeasurementOption) metric.MeasurementOption {
	if v, ok := p.attrSets.Load(key); ok {
		return v.(metric.MeasurementOption)
	}
	v, _ := p.attrSets.LoadOrStore(key, mk())
	return v.(metric.MeasurementOption)
}

var (
	_ core.BreadPlugin        = (*Plugin)(nil)
	_ core.PluginIniter       = (*Plugin)(nil)
	_ core.PluginCloser       = (*Plugin)(nil)
	_ core.MiddlewareProvider = (*Plugin)(nil)
)

// New builds the plugin and, unless given providers, the SDK providers and
// exporters that Options and the OTEL_* variables describe.
func New(ctx context.Context, opts Options) (*Plugin, error) {
	p := &Plugin{
		runs: map[string]*scope{}, steps: map[string]*scope{}, tools: map[string]*child{},
		loops: map[string]*child{}, tasks: map[string]*child{}, suspended: newSpanRing(4096),
	}
	tp, mp, shutdown, sc, err := providers(ctx, opts)
	if err != nil {
		return nil, err
	}
	p.shutdown, p.scrape = shutdown, sc
	p.prop = opts.Propagator
	if p.prop == nil {
		p.prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	if opts.SetGlobal {
		setGlobal(tp, mp, p.prop)
	}
	p.tracer = tp.Tracer(ScopeName)
	if p.m, err = newInstruments(mp.Meter(ScopeName)); err != nil {
		_ = p.Close(ctx)
		return nil, err
	}
	return p, nil
}

// Name is "otel".
func (p *Plugin) Name() string { return "otel" }

// Init subscribes to the engine's crumbs.
func (p *Plugin) Init(_ context.Context, rt core.Runtime) error {
	p.rt = rt
	p.remove = rt.On(p.onCrumb)
	return nil
}

// Close ends the spans runs left open, stops listening, and flushes and
// shuts down the providers the plugin built (not those it was given).
func (p *Plugin) Close(ctx context.Context) error {
	p.removeOnce.Do(func() {
		if p.remove != nil {
			p.remove()
		}
	})
	p.endAll()
	var errs []error
	for _, f := range p.shutdown {
		errs = append(errs, f(ctx))
	}
	p.shutdown = nil
	return errors.Join(errs...)
}

// Propagator is the propagator the plugin injects and extracts with.
func (p *Plugin) Propagator() propagation.TextMapPropagator { return p.prop }

// HTTPClient is an http.Client whose requests carry the caller's trace
// context and are traced as client spans: give it to remote agents
// (httpchunked.RemoteOptions.HTTPClient) so the remote server continues
// the run's trace.
func (p *Plugin) HTTPClient() *http.Client {
	return &http.Client{Transport: p.Transport(nil)}
}

// Tracer is the plugin's tracer, for spans of your own around bread calls.
func (p *Plugin) Tracer() trace.Tracer { return p.tracer }
