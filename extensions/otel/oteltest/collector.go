// Package oteltest is a local OTLP/HTTP collector for tests of programs
// that export with extensions/otel: it decodes the protobuf the exporters
// send and keeps the spans and metric names, so a test can assert on what
// left the process. It is not a collector to run anything else with.
package oteltest

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	collmetric "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, flattened.
type Span struct {
	Service      string
	Name         string
	Kind         string
	TraceID      string
	SpanID       string
	ParentSpanID string
	Attrs        map[string]any
	Links        []Link
	StatusError  bool
	Start, End   time.Time
}

// Link is one received span link.
type Link struct {
	TraceID, SpanID string
}

// Collector receives OTLP/HTTP exports (POST /v1/traces and /v1/metrics,
// binary protobuf, gzip or not) on a loopback port.
type Collector struct {
	// URL is the collector's base URL, the value for an exporter's
	// endpoint or OTEL_EXPORTER_OTLP_ENDPOINT.
	URL string

	srv     *httptest.Server
	mu      sync.Mutex
	spans   []Span
	metrics []string
}

// NewCollector starts a collector that stops when the test ends.
func NewCollector(t testing.TB) *Collector {
	c := &Collector{}
	c.srv = httptest.NewServer(http.HandlerFunc(c.serve))
	c.URL = c.srv.URL
	t.Cleanup(c.srv.Close)
	return c
}

func (c *Collector) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = gz
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var reply proto.Message
	switch r.URL.Path {
	case "/v1/traces":
		var req colltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(raw, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.addSpans(&req)
		reply = &colltrace.ExportTraceServiceResponse{}
	case "/v1/metrics":
		var req collmetric.ExportMetricsServiceRequest
		if err := proto.Unmarshal(raw, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.addMetrics(&req)
		reply = &collmetric.ExportMetricsServiceResponse{}
	default:
		http.NotFound(w, r)
		return
	}
	out, _ := proto.Marshal(reply)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = io.Copy(w, bytes.NewReader(out))
}

func (c *Collector) addSpans(req *colltrace.ExportTraceServiceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		service := ""
		if rs.Resource != nil {
			service, _ = attrs(rs.Resource.Attributes)["service.name"].(string)
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				sp := Span{
					Service: service, Name: s.Name, Kind: s.Kind.String(),
					TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId), ParentSpanID: hex.EncodeToString(s.ParentSpanId),
					Attrs: attrs(s.Attributes), StatusError: s.Status != nil && s.Status.Code == 2,
					Start: time.Unix(0, int64(s.StartTimeUnixNano)), End: time.Unix(0, int64(s.EndTimeUnixNano)),
				}
				for _, l := range s.Links {
					sp.Links = append(sp.Links, Link{TraceID: hex.EncodeToString(l.TraceId), SpanID: hex.EncodeToString(l.SpanId)})
				}
				c.spans = append(c.spans, sp)
			}
		}
	}
}

func (c *Collector) addMetrics(req *collmetric.ExportMetricsServiceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if !slices.Contains(c.metrics, m.Name) {
					c.metrics = append(c.metrics, m.Name)
				}
			}
		}
	}
}

func attrs(kvs []*common.KeyValue) map[string]any {
	out := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		out[kv.Key] = value(kv.Value)
	}
	return out
}

func value(v *common.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *common.AnyValue_StringValue:
		return x.StringValue
	case *common.AnyValue_IntValue:
		return x.IntValue
	case *common.AnyValue_BoolValue:
		return x.BoolValue
	case *common.AnyValue_DoubleValue:
		return x.DoubleValue
	case *common.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.Values {
			out = append(out, value(e))
		}
		return out
	}
	return nil
}

// Spans returns the spans received so far.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.spans)
}

// Metrics returns the names of the metrics received so far.
func (c *Collector) Metrics() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.metrics)
}

// WaitFor polls until done reports true of the received spans, for up to
// timeout, and returns them; it fails the test on timeout.
func (c *Collector) WaitFor(t testing.TB, timeout time.Duration, done func([]Span) bool) []Span {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		spans := c.Spans()
		if done(spans) {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector did not get the expected spans within %s; it has %d:\n%s", timeout, len(spans), Tree(spans))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
