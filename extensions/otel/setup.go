package otel

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/breadai/bread/core"
)

// Exporter chooses where one signal goes.
type Exporter struct {
	// Exporter is "otlp", "stdout" (or "console") or "none". Empty reads
	// OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER, and is "none" when
	// they are unset too.
	Exporter string `json:"exporter"`
	// Protocol of OTLP: "http/protobuf" (default) or "grpc". Empty reads
	// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL / ..._METRICS_PROTOCOL, then
	// OTEL_EXPORTER_OTLP_PROTOCOL.
	Protocol string `json:"protocol"`
	// Endpoint is the collector's URL (http://collector:4318 for HTTP,
	// http://collector:4317 for gRPC; http:// means no TLS). Empty lets the
	// exporter read OTEL_EXPORTER_OTLP_*ENDPOINT, else localhost.
	Endpoint string `json:"endpoint"`
	// Insecure turns TLS off for an endpoint given without a scheme.
	Insecure bool `json:"insecure"`
	// Headers are sent with every export (OTEL_EXPORTER_OTLP_HEADERS is
	// read as well).
	Headers map[string]string `json:"headers"`
	// Interval between metric exports (default OTEL_METRIC_EXPORT_INTERVAL,
	// else 60 s). Ignored for traces.
	Interval Duration `json:"interval"`
	// Path is where exporter "prometheus" (metrics only) serves the
	// Prometheus text format on the bread server (default /metrics).
	Path string `json:"path"`
}

// Duration reads "10s"-style strings from bread.yaml.
type Duration time.Duration

// UnmarshalJSON parses a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// providers returns the providers opts describe, and the shutdown functions
// of those the plugin owns.
func providers(ctx context.Context, opts Options) (trace.TracerProvider, metric.MeterProvider, []func(context.Context) error, *scrape, error) {
	env := opts.LookupEnv
	if env == nil {
		env = os.LookupEnv
	}
	getenv := func(k string) string { v, _ := env(k); return strings.TrimSpace(v) }
	tp, mp := opts.TracerProvider, opts.MeterProvider
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		if tp == nil {
			tp = tracenoop.NewTracerProvider()
		}
		if mp == nil {
			mp = metricnoop.NewMeterProvider()
		}
		return tp, mp, nil, nil, nil
	}
	var shutdown []func(context.Context) error
	var res *resource.Resource
	if tp == nil || mp == nil {
		var err error
		if res, err = newResource(ctx, opts.ServiceName, getenv); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	var sc *scrape
	if tp == nil {
		kind := choose(opts.Traces.Exporter, getenv("OTEL_TRACES_EXPORTER"))
		exp, err := traceExporter(ctx, kind, opts.Traces, getenv, stdout(opts))
		if err != nil {
			return nil, nil, nil, nil, err
		}
		if exp == nil {
			tp = tracenoop.NewTracerProvider()
		} else {
			sdk := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
			tp, shutdown = sdk, append(shutdown, sdk.Shutdown)
		}
	}
	if mp == nil {
		kind := choose(opts.Metrics.Exporter, getenv("OTEL_METRICS_EXPORTER"))
		var exp sdkmetric.Exporter
		var reader sdkmetric.Reader
		var err error
		if kind == "prometheus" {
			reader, sc, err = prometheusReader(opts.Metrics)
		} else {
			exp, err = metricExporter(ctx, kind, opts.Metrics, getenv, stdout(opts))
		}
		if err != nil {
			for _, f := range shutdown {
				_ = f(ctx)
			}
			return nil, nil, nil, nil, err
		}
		if reader != nil {
			sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(res))
			mp, shutdown = sdk, append(shutdown, sdk.Shutdown)
		} else if exp == nil {
			mp = metricnoop.NewMeterProvider()
		} else {
			var ro []sdkmetric.PeriodicReaderOption
			if opts.Metrics.Interval > 0 {
				ro = append(ro, sdkmetric.WithInterval(time.Duration(opts.Metrics.Interval)))
			}
			sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, ro...)), sdkmetric.WithResource(res))
			mp, shutdown = sdk, append(shutdown, sdk.Shutdown)
		}
	}
	return tp, mp, shutdown, sc, nil
}

func stdout(opts Options) io.Writer {
	if opts.Stdout != nil {
		return opts.Stdout
	}
	return os.Stdout
}

func newResource(ctx context.Context, name string, getenv func(string) string) (*resource.Resource, error) {
	opts := []resource.Option{resource.WithTelemetrySDK(), resource.WithAttributes(attribute.String("service.name", "bread")), resource.WithFromEnv()}
	if name == "" {
		name = getenv("OTEL_SERVICE_NAME")
	}
	if name != "" {
		opts = append(opts, resource.WithAttributes(attribute.String("service.name", name)))
	}
	res, err := resource.New(ctx, opts...)
	if err != nil {
		return nil, core.Errorf(core.CodeInvalidConfig, "otel: resource: %w", err)
	}
	return res, nil
}

// choose takes the configured exporter, else the environment's first
// (OTEL_*_EXPORTER may list several; one is supported), else none.
func choose(configured, env string) string {
	if configured != "" {
		return strings.ToLower(configured)
	}
	first, _, _ := strings.Cut(env, ",")
	if first = strings.ToLower(strings.TrimSpace(first)); first != "" {
		return first
	}
	return "none"
}

func protocol(configured string, getenv func(string) string, signal string) (string, error) {
	p := configured
	if p == "" {
		p = getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL")
	}
	if p == "" {
		p = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch strings.ToLower(p) {
	case "", "http/protobuf", "http":
		return "http", nil
	case "grpc":
		return "grpc", nil
	}
	return "", core.Errorf(core.CodeInvalidConfig, "otel: OTLP protocol %q is not http/protobuf or grpc", p)
}

func traceExporter(ctx context.Context, kind string, e Exporter, getenv func(string) string, out io.Writer) (sdktrace.SpanExporter, error) {
	switch kind {
	case "none", "":
		return nil, nil
	case "stdout", "console":
		return stdouttrace.New(stdouttrace.WithWriter(out))
	case "otlp":
		proto, err := protocol(e.Protocol, getenv, "TRACES")
		if err != nil {
			return nil, err
		}
		if proto == "grpc" {
			return otlptracegrpc.New(ctx, otlpOptions(e, e.Endpoint, otlptracegrpc.WithEndpointURL, otlptracegrpc.WithInsecure, otlptracegrpc.WithHeaders)...)
		}
		return otlptracehttp.New(ctx, otlpOptions(e, signalURL(e.Endpoint, "/v1/traces"), otlptracehttp.WithEndpointURL, otlptracehttp.WithInsecure, otlptracehttp.WithHeaders)...)
	}
	return nil, core.Errorf(core.CodeInvalidConfig, "otel: unknown traces exporter %q; known: otlp, stdout, none", kind)
}

func metricExporter(ctx context.Context, kind string, e Exporter, getenv func(string) string, out io.Writer) (sdkmetric.Exporter, error) {
	switch kind {
	case "none", "":
		return nil, nil
	case "stdout", "console":
		return stdoutmetric.New(stdoutmetric.WithWriter(out))
	case "otlp":
		proto, err := protocol(e.Protocol, getenv, "METRICS")
		if err != nil {
			return nil, err
		}
		if proto == "grpc" {
			return otlpmetricgrpc.New(ctx, otlpOptions(e, e.Endpoint, otlpmetricgrpc.WithEndpointURL, otlpmetricgrpc.WithInsecure, otlpmetricgrpc.WithHeaders)...)
		}
		return otlpmetrichttp.New(ctx, otlpOptions(e, signalURL(e.Endpoint, "/v1/metrics"), otlpmetrichttp.WithEndpointURL, otlpmetrichttp.WithInsecure, otlpmetrichttp.WithHeaders)...)
	}
	return nil, core.Errorf(core.CodeInvalidConfig, "otel: unknown metrics exporter %q; known: otlp, prometheus, stdout, none", kind)
}

// otlpOptions builds an OTLP exporter's options from e with its package's
// own constructors (each exporter package has its own option type). url is
// empty when e.Endpoint is: the exporter then reads OTEL_* itself.
func otlpOptions[O any](e Exporter, url string, withURL func(string) O, insecure func() O, headers func(map[string]string) O) []O {
	var o []O
	if e.Endpoint != "" {
		o = append(o, withURL(url))
	}
	if e.Insecure {
		o = append(o, insecure())
	}
	if len(e.Headers) > 0 {
		o = append(o, headers(e.Headers))
	}
	return o
}

// signalURL appends the signal's path to a bare collector URL, as the
// OTEL_EXPORTER_OTLP_ENDPOINT convention does: http://c:4318 becomes
// http://c:4318/v1/traces. A URL with a path is used as it is.
func signalURL(endpoint, path string) string {
	rest := endpoint
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if i := strings.IndexByte(rest, '/'); i < 0 || rest[i:] == "/" {
		return strings.TrimSuffix(endpoint, "/") + path
	}
	return endpoint
}

func setGlobal(tp trace.TracerProvider, mp metric.MeterProvider, prop propagation.TextMapPropagator) {
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	otel.SetTextMapPropagator(prop)
}
