package mcpclient_test

import (
	"context"
	"encoding/json"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/protocols/mcpclient"
)

// everyRun is a model that calls one tool in the first turn of every run
// and answers "ok" once the tool answered.
type everyRun struct {
	name string
	args any
	mu   sync.Mutex
	reqs []core.ModelRequest
}

func callEveryRun(name string, args any) *everyRun { return &everyRun{name: name, args: args} }

func (m *everyRun) Registry(provider string) core.ProviderRegistry {
	return core.ProviderRegistry{provider: func(string) (core.LanguageModel, error) { return m, nil }}
}

func (m *everyRun) Requests() []core.ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.reqs)
}

func (m *everyRun) Stream(ctx context.Context, req core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	turn := modeltest.ToolCall(m.name, m.args)
	if n := len(req.Messages); n > 0 {
		for _, p := range req.Messages[n-1].Parts {
			if p.Type == core.PartToolResult {
				turn = modeltest.Text("ok")
			}
		}
	}
	return modeltest.New(turn).Stream(ctx, req)
}

// registry is what start needs of a model.
type registry interface {
	Registry(provider string) core.ProviderRegistry
}

// start builds and starts an engine with the plugin and the agents, on the
// scripted model; Stop runs at cleanup.
func start(t *testing.T, p core.BreadPlugin, model registry, agents ...*core.Agent) *engine.Instance {
	t.Helper()
	for _, a := range agents {
		if a.Model.Provider == "" {
			a.Model = core.ModelRef{Provider: "scripted", Model: "m"}
		}
	}
	in, err := engine.New(engine.Config{Store: memory.New(), Providers: model.Registry("scripted"), Agents: agents, Plugins: []core.BreadPlugin{p}})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	return in
}

// run drains one run and returns its crumbs and its error.
func run(t *testing.T, in *engine.Instance, agentID string, input any) ([]core.Crumb, error) {
	t.Helper()
	var out []core.Crumb
	var runErr error
	for c, err := range in.Run(t.Context(), agentID, input, core.RunOptions{}) {
		if c != nil {
			out = append(out, c)
		}
		if err != nil {
			runErr = err
		}
	}
	return out, runErr
}

func find[T core.Crumb](crumbs []core.Crumb) []T {
	var out []T
	for _, c := range crumbs {
		if v, ok := c.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

func agentWith(id string, cfg mcpclient.AgentConfig) *core.Agent {
	return &core.Agent{ID: id, Plugins: map[string]any{mcpclient.PluginName: cfg}}
}

// echoArgs is the arguments of the test servers' echo tool.
type echoArgs struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

type weather struct {
	City  string  `json:"city"`
	TempC float64 `json:"tempC"`
}

var pngPixel = []byte("\x89PNG\r\n\x1a\n")

// testServer is an in-process MCP server with tools covering every kind of
// result.
func testServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text."}, func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "getWeather", Description: "Weather of a city."}, func(_ context.Context, _ *mcp.CallToolRequest, a struct {
		City string `json:"city"`
	}) (*mcp.CallToolResult, weather, error) {
		return nil, weather{City: a.City, TempC: 21.5}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "chart", Description: "An image and a link."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "the chart"},
			&mcp.ImageContent{Data: pngPixel, MIMEType: "image/png"},
			&mcp.ResourceLink{URI: "file:///charts/q3.pdf", Name: "q3", MIMEType: "application/pdf"},
		}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the disk is full"}}}, nil, nil
	})
	return s
}

// serveHTTP serves s over Streamable HTTP (stateless, so both protocol
// revisions work) behind an optional check of each request.
func serveHTTP(t *testing.T, s *mcp.Server, check func(*http.Request) bool) *httptest.Server {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if check != nil && !check(r) {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

var fixture struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// fixtureBinary builds internal/testserver once.
func fixtureBinary(t *testing.T) string {
	t.Helper()
	fixture.once.Do(func() {
		dir, err := os.MkdirTemp("", "mcpclient-fixture-")
		if err != nil {
			fixture.err = err
			return
		}
		fixture.path = filepath.Join(dir, "testserver")
		fixture.out, fixture.err = exec.Command("go", "build", "-o", fixture.path, "./internal/testserver").CombinedOutput()
	})
	if fixture.err != nil {
		t.Fatalf("building the stdio fixture: %v\n%s", fixture.err, fixture.out)
	}
	return fixture.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixture.path != "" {
		os.RemoveAll(filepath.Dir(fixture.path))
	}
	os.Exit(code)
}

// eventually polls cond until it holds or 10 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func toolNames(tools []core.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func newEngine(p core.BreadPlugin, model *modeltest.Model, agents ...*core.Agent) (*engine.Instance, error) {
	return engine.New(engine.Config{Store: memory.New(), Providers: model.Registry("scripted"), Agents: agents, Plugins: []core.BreadPlugin{p}})
}

// listen listens on addr, retrying briefly (a port just released may still
// be in use).
func listen(t *testing.T, addr string) net.Listener {
	t.Helper()
	var err error
	for range 50 {
		var ln net.Listener
		if ln, err = net.Listen("tcp", addr); err == nil {
			return ln
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal(err)
	return nil
}
