package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/protocols/mcpserver"
)

// changes counts the list_changed notifications a client receives.
type changes struct{ tools, prompts, resources chan struct{} }

func newChanges() *changes {
	return &changes{make(chan struct{}, 8), make(chan struct{}, 8), make(chan struct{}, 8)}
}

func (c *changes) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { c.tools <- struct{}{} },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { c.prompts <- struct{}{} },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { c.resources <- struct{}{} },
	}
}

func (c *changes) await(t *testing.T, who string) {
	t.Helper()
	for what, ch := range map[string]chan struct{}{"tools": c.tools, "prompts": c.prompts, "resources": c.resources} {
		select {
		case <-ch:
		case <-t.Context().Done():
			t.Fatalf("%s: no %s/list_changed", who, what)
		}
	}
}

// front is one URL in front of whichever stack serves, as bread dev's
// listener is in front of the current generation.
type front struct {
	cur atomic.Pointer[http.Handler]
	srv *httptest.Server
}

func newFront(t *testing.T, st *stack) *front {
	f := &front{}
	f.serve(st)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*f.cur.Load()).ServeHTTP(w, r) }))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *front) serve(st *stack) {
	h := st.srv.Config.Handler
	f.cur.Store(&h)
}

func (f *front) connect(t *testing.T, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: f.srv.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Two plugins on one Endpoint, as two bread dev generations: clients
// connected to the first (a 2025-11-25 session and a 2026-07-28 listener
// over HTTP, and stdio) keep their sessions when the second is activated,
// receive list_changed for tools, prompts and resources, list the new
// agent, and their calls run on the second project. The first instance
// stopping leaves the endpoint serving; the active one stopping ends it.
func TestReloadSwapsListsAndNotifies(t *testing.T) {
	ep := mcpserver.NewEndpoint()
	st1 := newStack(t, setup{model: modeltest.New(modeltest.Text("one")), agents: []*core.Agent{echo()},
		opts: mcpserver.Options{Agents: []string{"echo"}, Endpoint: ep}})
	f := newFront(t, st1)
	clients := map[string]*mcp.ClientSession{}
	seen := map[string]*changes{}
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		seen[v] = newChanges()
		clients[v] = f.connect(t, v, seen[v].options())
	}
	seen["stdio"] = newChanges()
	clients["stdio"] = stdioSession(t, st1.plugin, seen["stdio"].options())
	ctx := t.Context()

	fresh := &core.Agent{ID: "fresh", Skills: []core.Skill{{ID: "rise", Instructions: "Let it rise."}}}
	st2 := newStack(t, setup{model: modeltest.New(modeltest.Text("two")), agents: []*core.Agent{echo(), fresh},
		opts: mcpserver.Options{Agents: []string{"echo", "fresh"}, Endpoint: ep}})
	// Init alone does not take the endpoint over: its instance may still
	// be starting.
	if lt, err := clients["2025-11-25"].ListTools(ctx, nil); err != nil || len(lt.Tools) != 1 {
		t.Fatalf("before Activate the first project's tools are listed: %v %v", err, lt)
	}
	f.serve(st2)
	if err := st2.plugin.Activate(); err != nil {
		t.Fatal(err)
	}
	for who, cs := range clients {
		seen[who].await(t, who)
		lt, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("%s: %v", who, err)
		}
		var names []string
		for _, tl := range lt.Tools {
			names = append(names, tl.Name)
		}
		if slices.Sort(names); !slices.Equal(names, []string{"echo", "fresh"}) {
			t.Errorf("%s: tools after the reload %v", who, names)
		}
		lr, err := cs.ListResources(ctx, nil)
		if err != nil || len(lr.Resources) != 1 || lr.Resources[0].URI != "bread://agents/fresh/skills/rise" {
			t.Errorf("%s: resources after the reload %v %v", who, err, lr)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"input": "hi"}})
		if err != nil || res.IsError || text(res) != "two" {
			t.Errorf("%s: echo runs on the second project: %v %+v", who, err, res)
		}
	}

	// The retired instance stops; the endpoint stays with the second.
	if err := st1.in.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := clients["2025-11-25"].CallTool(ctx, &mcp.CallToolParams{Name: "fresh", Arguments: map[string]any{"input": "hi"}})
	if err != nil || res.IsError || text(res) != "two" {
		t.Fatalf("fresh after the first instance stopped: %v %+v", err, res)
	}
	if err := st2.in.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err = clients["stdio"].CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"input": "hi"}})
	if err != nil || !res.IsError || text(res) == "" {
		t.Errorf("a call once the active instance stopped is an error result: %v %+v", err, res)
	}
}

// An endpoint is shared only by plugins that agree on what its server and
// handlers were built with.
func TestSharedEndpointSettings(t *testing.T) {
	ep := mcpserver.NewEndpoint()
	newStack(t, setup{agents: []*core.Agent{echo()}, opts: mcpserver.Options{Agents: []string{"echo"}, Endpoint: ep}})
	p, err := mcpserver.New(mcpserver.Options{Agents: []string{"echo"}, Endpoint: ep, Stateless: true})
	if err != nil {
		t.Fatal(err)
	}
	err = mustEngine(t, p).Start(t.Context())
	if ce := core.AsBreadError(err, ""); ce == nil || ce.Code != core.CodeInvalidConfig {
		t.Fatalf("a plugin asking for a stateless endpoint of a stateful one: %v", err)
	}
}
