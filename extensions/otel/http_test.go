package otel_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	breadotel "github.com/breadai/bread/extensions/otel"
	"github.com/breadai/bread/extensions/otel/oteltest"
)

// TestTraceContextCrossesHTTP sends a request through the plugin's
// Transport to a server behind its Middleware: the server's span is a child
// of the client's, in the caller's trace, and a streamed response counts as
// an open stream while it lasts.
func TestTraceContextCrossesHTTP(t *testing.T) {
	r := newRig(t, engine.Config{Providers: modeltest.New().Registry("scripted"), Agents: []*core.Agent{agent("a")}})
	inStream := make(chan struct{})
	release := make(chan struct{})
	var serverSpan trace.SpanContext
	srv := httptest.NewServer(r.plugin.Middleware(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		serverSpan = trace.SpanContextFromContext(req.Context())
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(200)
		http.NewResponseController(w).Flush()
		close(inStream)
		<-release
		io.WriteString(w, "{}\n")
	})))
	defer srv.Close()

	ctx, parent := r.plugin.Tracer().Start(t.Context(), "caller")
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/agents/a/run", strings.NewReader("{}"))
	resp, err := (&http.Client{Transport: r.plugin.Transport(nil)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	<-inStream
	if got := r.gauge(t, breadotel.MetricStreamsOpen); got != 1 {
		t.Errorf("open streams during the stream: %d, want 1", got)
	}
	close(release)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	parent.End()
	srv.Close()
	if got := r.gauge(t, breadotel.MetricStreamsOpen); got != 0 {
		t.Errorf("open streams after the stream: %d, want 0", got)
	}
	if serverSpan.TraceID() != parent.SpanContext().TraceID() {
		t.Fatalf("the server span is in trace %s, the caller's is %s", serverSpan.TraceID(), parent.SpanContext().TraceID())
	}
	want := "caller\n  POST\n    POST\n"
	if got := tree(r.ended()); got != want {
		t.Fatalf("span tree:\n%s\nwant:\n%s", got, want)
	}
	client := find(r.ended(), "POST")
	if client.SpanKind() == trace.SpanKindServer {
		for _, s := range r.ended() {
			if s.Name() == "POST" && s.SpanKind() == trace.SpanKindClient {
				client = s
			}
		}
	}
	if attr(client, "http.response.status_code") != int64(200) || attr(client, "server.address") != "127.0.0.1" {
		t.Errorf("client span attributes %v", client.Attributes())
	}
}

// TestExportOverOTLPHTTP exports spans and metrics to a local collector
// that decodes the protobuf: over HTTP configured in Options, over gRPC,
// and over HTTP from the standard OTEL_* variables alone.
func TestExportOverOTLPHTTP(t *testing.T) {
	for _, how := range []string{"options", "grpc", "environment"} {
		t.Run(how, func(t *testing.T) {
			coll := oteltest.NewCollector(t)
			opts := breadotel.Options{ServiceName: "bread-test"}
			env := map[string]string{}
			switch how {
			case "options":
				opts.Traces = breadotel.Exporter{Exporter: "otlp", Endpoint: coll.URL}
				opts.Metrics = breadotel.Exporter{Exporter: "otlp", Protocol: "http/protobuf", Endpoint: coll.URL}
			case "grpc":
				coll = oteltest.NewGRPCCollector(t)
				opts.Traces = breadotel.Exporter{Exporter: "otlp", Protocol: "grpc", Endpoint: coll.URL}
				opts.Metrics = breadotel.Exporter{Exporter: "otlp", Protocol: "grpc", Endpoint: coll.URL}
			default:
				env = map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "otlp", "OTEL_SERVICE_NAME": "bread-env"}
				t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", coll.URL)
				opts.ServiceName = ""
			}
			opts.LookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
			p, err := breadotel.New(t.Context(), opts)
			if err != nil {
				t.Fatal(err)
			}
			model := modeltest.New(modeltest.Text("hi"))
			in, err := engine.New(engine.Config{Store: memoryStore(), Providers: p.WrapProviders(model.Registry("scripted")),
				Agents: []*core.Agent{agent("a")}, Plugins: []core.BreadPlugin{p}})
			if err != nil {
				t.Fatal(err)
			}
			if err := in.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			if _, err := in.RunSync(t.Context(), "a", "go", core.RunOptions{}); err != nil {
				t.Fatal(err)
			}
			// Stop closes the plugin, which flushes its exporters.
			if err := in.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			spans := coll.WaitFor(t, 5*time.Second, func(s []oteltest.Span) bool { return len(s) >= 2 })
			if got := oteltest.Tree(spans); !strings.HasPrefix(got, "agent.run [bread-") || !strings.Contains(got, "\n  chat m1 [") {
				t.Errorf("received spans:\n%s", got)
			}
			service := map[string]string{"options": "bread-test", "grpc": "bread-test", "environment": "bread-env"}[how]
			if spans[0].Service != service {
				t.Errorf("service.name %q, want %q", spans[0].Service, service)
			}
			if ms := coll.Metrics(); !contains(ms, breadotel.MetricRunsEnded) || !contains(ms, breadotel.MetricModelDuration) {
				t.Errorf("received metrics %v", ms)
			}
		})
	}
}

func TestStdoutExporter(t *testing.T) {
	var out syncBuffer
	p, err := breadotel.New(t.Context(), breadotel.Options{Traces: breadotel.Exporter{Exporter: "stdout"}, Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	in, err := engine.New(engine.Config{Store: memoryStore(), Providers: p.WrapProviders(modeltest.New(modeltest.Text("hi")).Registry("scripted")),
		Agents: []*core.Agent{agent("a")}, Plugins: []core.BreadPlugin{p}})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := in.RunSync(t.Context(), "a", "go", core.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := in.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, `"Name":"agent.run"`) || !strings.Contains(s, `"Name":"chat m1"`) {
		t.Errorf("stdout exporter wrote:\n%.600s", s)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestUnknownExporterIsAConfigError(t *testing.T) {
	_, err := breadotel.New(t.Context(), breadotel.Options{Traces: breadotel.Exporter{Exporter: "zipkin"}})
	if err == nil || !strings.Contains(err.Error(), "INVALID_CONFIG") {
		t.Fatalf("got %v", err)
	}
	_, err = breadotel.New(t.Context(), breadotel.Options{Traces: breadotel.Exporter{Exporter: "otlp", Protocol: "thrift"}})
	if err == nil {
		t.Fatal("an unknown protocol was accepted")
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
