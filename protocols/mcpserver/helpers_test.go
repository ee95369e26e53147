package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/core/stream"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/protocols/mcpserver"
	"github.com/breadai/bread/server"
	"github.com/breadai/bread/stores/teststores"
)

// quietBus is the in-process bus, mounting no streaming routes of its own:
// these tests need only the plugin's.
type quietBus struct{ core.BreadBus }

func (quietBus) Mount(core.Router, core.Runtime) {}

// stack is an engine with the plugin, served over HTTP.
type stack struct {
	in     *engine.Instance
	plugin *mcpserver.Plugin
	srv    *httptest.Server
	mu     sync.Mutex
	crumbs []core.Crumb
}

func (s *stack) seen() []core.Crumb {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]core.Crumb(nil), s.crumbs...)
}

type setup struct {
	store  core.BreadStore // nil: a memory store
	opts   mcpserver.Options
	model  *modeltest.Model
	agents []*core.Agent
	tasks  []*core.Task
	auth   *server.Auth
	more   []core.BreadPlugin
	// providers are added to the scripted model's registry.
	providers core.ProviderRegistry
	blobs     core.BlobStore
}

// eachStore runs f on every store of stores/teststores: a suspended run is
// resumed, and a cancelled run's record read, from the store.
func eachStore(t *testing.T, f func(t *testing.T, open func(testing.TB) core.BreadStore)) {
	teststores.Each(t, func(t *testing.T, s teststores.Store) { f(t, s.Open) })
}

func newStack(t *testing.T, s setup) *stack {
	t.Helper()
	if s.model == nil {
		s.model = modeltest.New(modeltest.Text("ok"))
	}
	for _, a := range s.agents {
		if a.Model.Provider == "" {
			a.Model = core.ModelRef{Provider: "scripted", Model: "m"}
		}
	}
	for _, tk := range s.tasks {
		tk.Model = core.ModelRef{Provider: "scripted", Model: "m"}
	}
	var in *engine.Instance
	if s.opts.RunTask == nil && len(s.opts.Tasks) > 0 {
		s.opts.RunTask = func(ctx context.Context, _ core.Runtime, task string, args any) (any, error) {
			return in.RunTask(ctx, task, args, engine.TaskOptions{AgentID: "mcp"})
		}
	}
	p, err := mcpserver.New(s.opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.store == nil {
		s.store = memory.New()
	}
	providers := s.model.Registry("scripted")
	for k, v := range s.providers {
		providers[k] = v
	}
	in, err = engine.New(engine.Config{Store: s.store, Bus: quietBus{stream.New(stream.Options{})}, Providers: providers, Agents: s.agents, Tasks: s.tasks, Plugins: append(s.more, p), BlobStore: s.blobs})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	st := &stack{in: in, plugin: p}
	remove := in.On(func(_ context.Context, c core.Crumb) {
		st.mu.Lock()
		st.crumbs = append(st.crumbs, c)
		st.mu.Unlock()
	})
	t.Cleanup(remove)
	srv, err := server.New(in, server.Options{Auth: s.auth})
	if err != nil {
		t.Fatal(err)
	}
	st.srv = httptest.NewServer(srv.Handler())
	t.Cleanup(st.srv.Close)
	return st
}

// connect opens an SDK client session on the stack's /mcp endpoint.
func (s *stack) connect(t *testing.T, version string, opts *mcp.ClientOptions, headers http.Header) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	tr := &mcp.StreamableClientTransport{Endpoint: s.srv.URL + "/mcp", HTTPClient: &http.Client{Transport: headerTransport{headers}}}
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(t.Context(), tr, so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type headerTransport struct{ h http.Header }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

// stdioSession serves the plugin over a pipe pair and connects a client.
func stdioSession(t *testing.T, p *mcpserver.Plugin, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return stdioSessionOn(t, p, opts, "")
}

// stdioSessionOn is stdioSession speaking a given protocol revision ("":
// the client's latest).
func stdioSessionOn(t *testing.T, p *mcpserver.Plugin, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.ServeStdio(ctx, sr, sw) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(t.Context(), &mcp.IOTransport{Reader: cr, Writer: cw}, so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		sw.Close()
		cw.Close()
		<-done
	})
	return cs
}

func structured(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func text(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func schemaOf(t *testing.T, s any) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustEngine(t *testing.T, plugins ...core.BreadPlugin) *engine.Instance {
	t.Helper()
	in, err := engine.New(engine.Config{Store: memory.New(), Providers: modeltest.New().Registry("scripted"),
		Agents: []*core.Agent{{ID: "echo", Model: core.ModelRef{Provider: "scripted", Model: "m"}}}, Plugins: plugins})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func jsonEq(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
