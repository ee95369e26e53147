package otel

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/breadai/bread/core"
)

// ActionMetricsRead is the action of GET /metrics (Exporter.Path), for an
// allow list or server.public.
const ActionMetricsRead = "metrics.read"

// DefaultMetricsPath is where the Prometheus exporter serves.
const DefaultMetricsPath = "/metrics"

// scrape is the Prometheus side of metrics: exporter "prometheus" turns
// every bread metric into a pull endpoint instead of a push.
type scrape struct {
	path    string
	handler http.Handler
}

// prometheusReader builds the OTel Prometheus exporter on a registry of its
// own (never the process-global one, so two instances in one process do not
// collide) with the Go runtime and process collectors beside bread's
// metrics, and the handler that serves it in the Prometheus text format.
func prometheusReader(e Exporter) (sdkmetric.Reader, *scrape, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return nil, nil, core.Errorf(core.CodeInvalidConfig, "otel: prometheus: %w", err)
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, nil, core.Errorf(core.CodeInvalidConfig, "otel: prometheus: %w", err)
	}
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, nil, core.Errorf(core.CodeInvalidConfig, "otel: prometheus: %w", err)
	}
	path := e.Path
	if path == "" {
		path = DefaultMetricsPath
	}
	if path[0] != '/' {
		return nil, nil, core.Errorf(core.CodeInvalidConfig, "otel: metrics path %q must start with /", path)
	}
	return exp, &scrape{path: path, handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}, nil
}

var _ core.RoutesProvider = (*Plugin)(nil)

// Routes serves GET /metrics (Exporter.Path) under action metrics.read when
// the metrics exporter is "prometheus"; nothing otherwise.
func (p *Plugin) Routes(r core.Router) {
	if p.scrape != nil {
		r.Handle(ActionMetricsRead, http.MethodGet, p.scrape.path, p.scrape.handler)
	}
}
