package otel_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	breadotel "github.com/breadai/bread/extensions/otel"
)

type routes map[string]http.Handler

func (r routes) Handle(action, method, path string, h http.Handler) {
	r[action+" "+method+" "+path] = h
}

// Exporter "prometheus" serves every bread metric and the Go runtime's in
// the Prometheus text format at GET /metrics, under action metrics.read.
func TestPrometheusEndpoint(t *testing.T) {
	p, err := breadotel.New(t.Context(), breadotel.Options{Metrics: breadotel.Exporter{Exporter: "prometheus"},
		LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	rt := routes{}
	p.Routes(rt)
	h := rt[breadotel.ActionMetricsRead+" GET /metrics"]
	if h == nil {
		t.Fatalf("routes %v", rt)
	}
	model := modeltest.New(modeltest.Text("a"), modeltest.Text("b"), modeltest.Text("c"))
	in, err := engine.New(engine.Config{Store: p.WrapStore(memory.New()), Plugins: []core.BreadPlugin{p},
		Providers: p.WrapProviders(model.Registry("scripted")),
		Agents:    []*core.Agent{{ID: "writer", Model: core.ModelRef{Provider: "scripted", Model: "m"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer in.Stop(context.Background())
	for range 3 {
		if _, err := in.RunSync(t.Context(), "writer", "hi", core.RunOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	text := string(body)
	for _, want := range []string{
		`bread_runs_started_total{bread_agent_id="writer"`, `bread_runs_ended_total{bread_agent_id="writer",bread_status="completed"`, "gen_ai_client_operation_duration_seconds_count{", "bread_run_duration_seconds_count{", "bread_crumblog_append_duration_seconds_count{",
		"go_goroutines ", "go_memstats_alloc_bytes ", "process_",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if !strings.Contains(text, "} 3\n") {
		t.Errorf("/metrics shows no counter at 3 after three runs")
	}
	if t.Failed() {
		t.Logf("%s", text)
	}
}

// Without exporter "prometheus" the plugin adds no route.
func TestNoPrometheusNoRoute(t *testing.T) {
	p, err := breadotel.New(t.Context(), breadotel.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	rt := routes{}
	p.Routes(rt)
	if len(rt) != 0 {
		t.Fatalf("routes without prometheus: %v", rt)
	}
}
