package otel

import (
	"go.opentelemetry.io/otel/metric"
)

// The metric names. Durations are in seconds, as OpenTelemetry's semantic
// conventions have them.
const (
	MetricRunsStarted     = "bread.runs.started"
	MetricRunsEnded       = "bread.runs.ended"
	MetricRunDuration     = "bread.run.duration"
	MetricModelDuration   = "gen_ai.client.operation.duration"
	MetricModelTokens     = "gen_ai.client.token.usage"
	MetricToolDuration    = "bread.tool.duration"
	MetricStreamsOpen     = "bread.streams.open"
	MetricCrumbLogAppend  = "bread.crumblog.append.duration"
	MetricHTTPServerCalls = "http.server.request.duration"
)

type instruments struct {
	runsStarted metric.Int64Counter
	runsEnded   metric.Int64Counter
	runDuration metric.Float64Histogram
	modelTime   metric.Float64Histogram
	tokens      metric.Int64Histogram
	toolTime    metric.Float64Histogram
	streams     metric.Int64UpDownCounter
	appendTime  metric.Float64Histogram
	serverTime  metric.Float64Histogram
}

// latencyBuckets suit calls from a millisecond to minutes.
var latencyBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

func newInstruments(m metric.Meter) (*instruments, error) {
	var in instruments
	var err error
	set := func(e error) {
		if err == nil {
			err = e
		}
	}
	var e error
	in.runsStarted, e = m.Int64Counter(MetricRunsStarted, metric.WithUnit("{run}"), metric.WithDescription("Runs started, by agent."))
	set(e)
	in.runsEnded, e = m.Int64Counter(MetricRunsEnded, metric.WithUnit("{run}"), metric.WithDescription("Runs ended, by agent and status (completed, failed, suspended, cancelled)."))
	set(e)
	in.runDuration, e = m.Float64Histogram(MetricRunDuration, metric.WithUnit("s"), metric.WithDescription("Wall time of a run's execution, by agent and status."), metric.WithExplicitBucketBoundaries(latencyBuckets...))
	set(e)
	in.modelTime, e = m.Float64Histogram(MetricModelDuration, metric.WithUnit("s"), metric.WithDescription("Model call latency, from the request to the stream's end."), metric.WithExplicitBucketBoundaries(latencyBuckets...))
	set(e)
	in.tokens, e = m.Int64Histogram(MetricModelTokens, metric.WithUnit("{token}"), metric.WithDescription("Tokens of a model call, by gen_ai.token.type (input, output)."),
		metric.WithExplicitBucketBoundaries(1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576))
	set(e)
	in.toolTime, e = m.Float64Histogram(MetricToolDuration, metric.WithUnit("s"), metric.WithDescription("Tool call latency, by tool and outcome."), metric.WithExplicitBucketBoundaries(latencyBuckets...))
	set(e)
	in.streams, e = m.Int64UpDownCounter(MetricStreamsOpen, metric.WithUnit("{stream}"), metric.WithDescription("Crumb streams (NDJSON or SSE responses) open on the server."))
	set(e)
	in.appendTime, e = m.Float64Histogram(MetricCrumbLogAppend, metric.WithUnit("s"), metric.WithDescription("Latency of one crumb log append (a batch of one run's entries)."),
		metric.WithExplicitBucketBoundaries(0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1))
	set(e)
	in.serverTime, e = m.Float64Histogram(MetricHTTPServerCalls, metric.WithUnit("s"), metric.WithDescription("HTTP request duration on the bread server."), metric.WithExplicitBucketBoundaries(latencyBuckets...))
	set(e)
	return &in, err
}
