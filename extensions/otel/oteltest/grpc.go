package oteltest

import (
	"context"
	"net"
	"testing"

	collmetric "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

// NewGRPCCollector starts a collector that receives OTLP over gRPC
// (plaintext) on a loopback port; its URL is http://127.0.0.1:<port>, the
// value for a gRPC exporter's endpoint. It stops when the test ends.
func NewGRPCCollector(t testing.TB) *Collector {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &Collector{URL: "http://" + ln.Addr().String()}
	srv := grpc.NewServer()
	colltrace.RegisterTraceServiceServer(srv, traceService{c: c})
	collmetric.RegisterMetricsServiceServer(srv, metricsService{c: c})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return c
}

type traceService struct {
	colltrace.UnimplementedTraceServiceServer
	c *Collector
}

func (s traceService) Export(_ context.Context, req *colltrace.ExportTraceServiceRequest) (*colltrace.ExportTraceServiceResponse, error) {
	s.c.addSpans(req)
	return &colltrace.ExportTraceServiceResponse{}, nil
}

type metricsService struct {
	collmetric.UnimplementedMetricsServiceServer
	c *Collector
}

func (s metricsService) Export(_ context.Context, req *collmetric.ExportMetricsServiceRequest) (*collmetric.ExportMetricsServiceResponse, error) {
	s.c.addMetrics(req)
	return &collmetric.ExportMetricsServiceResponse{}, nil
}
