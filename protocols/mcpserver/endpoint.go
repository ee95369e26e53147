package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

// Endpoint is what MCP clients connect to: the SDK server, its Streamable
// HTTP handlers, the stateful sessions and who opened them, and the
// resource subscriptions. A plugin that is given none makes its own.
//
// Plugins given the same Endpoint (Options.Endpoint) serve it in turn: the
// lists (tools, prompts, resources) and the handlers are those of the
// active plugin, each call running on that plugin's runtime. Activating
// another plugin swaps them, and the SDK sends the sessions connected at
// that moment notifications/tools/list_changed (prompts, resources) for
// each list that changed. `bread dev` hands every reloaded project's plugin
// the endpoint of the one before, so a client keeps its session across a
// reload and learns of the new tools.
type Endpoint struct {
	mu       sync.Mutex // serializes open, activate and Close's deactivation
	server   *mcp.Server
	settings endpointSettings
	cur      atomic.Pointer[Plugin] // nil before the first Init and after the active plugin's Close

	stateless http.Handler
	stateful  http.Handler // nil when stateless
	owners    sessionOwners
	watched   watched  // transcript subscriptions
	reqs      sync.Map // request token → *inflight
	calls     sync.Map // callKey → request token
	parked    sync.Map // id → *parked: runs waiting for a retry's host message
}

// NewEndpoint returns an Endpoint for plugins to share (Options.Endpoint).
// The first plugin's Init sets it up with that plugin's options.
func NewEndpoint() *Endpoint { return &Endpoint{} }

// endpointSettings are the options an Endpoint is built with: a plugin
// that shares an Endpoint must have the same.
type endpointSettings struct {
	Name, Version                  string
	Stateless                      bool
	SessionTimeout, StreamLifetime time.Duration
}

func settingsOf(o Options) endpointSettings {
	return endpointSettings{Name: o.Name, Version: o.Version, Stateless: o.Stateless, SessionTimeout: o.SessionTimeout, StreamLifetime: o.StreamLifetime}
}

// open builds the SDK server and handlers on the first plugin's Init; a
// later plugin must ask for the same settings. The first plugin is
// activated at once; a later one waits for Activate, so that the endpoint
// never serves a runtime that is still starting.
func (e *Endpoint) open(p *Plugin) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	want := settingsOf(p.opts)
	if e.server != nil {
		if want != e.settings {
			return core.Errorf(core.CodeInvalidConfig, "mcpserver: a plugin sharing an endpoint must have its name, version, stateless, sessionTimeout and streamLifetime (%+v, not %+v)", e.settings, want)
		}
		if e.cur.Load() == nil {
			e.activateLocked(p)
		}
		return nil
	}
	e.settings = want
	e.server = mcp.NewServer(&mcp.Implementation{Name: want.Name, Version: want.Version}, &mcp.ServerOptions{
		Logger:             p.log,
		Capabilities:       capabilities(),
		CompletionHandler:  e.complete,
		SubscribeHandler:   e.subscribe,
		UnsubscribeHandler: e.unsubscribe,
	})
	e.stateless, e.stateful = e.newHTTPHandlers(p.log)
	e.activateLocked(p)
	return nil
}

// Activate makes p the plugin its endpoint serves: its tools, prompts and
// resources replace the previous plugin's, and connected clients are sent
// list_changed for each list that changed. A plugin is activated at Init
// when its endpoint serves no other; call Activate once p's instance has
// started (bread dev does, before it routes requests to the new project).
func (p *Plugin) Activate() error {
	if p.rt == nil {
		return core.Errorf(core.CodeNotStarted, "mcpserver: Init has not run")
	}
	if p.closed.Load() {
		return core.Errorf(core.CodeInvalidConfig, "mcpserver: the plugin is closed")
	}
	p.ep.mu.Lock()
	defer p.ep.mu.Unlock()
	p.ep.activateLocked(p)
	return nil
}

func (e *Endpoint) activateLocked(p *Plugin) {
	old := e.cur.Load()
	if old == p {
		return
	}
	var was lists
	if old != nil {
		was = old.lists
	}
	s, now := e.server, p.lists
	syncList(was.tools, now.tools, func(t exposed) any { return t.tool }, s.RemoveTools, func(name string, t exposed) {
		s.AddTool(t.tool, e.callTool(name))
	})
	syncList(was.prompts, now.prompts, func(pr exposedPrompt) any { return pr.prompt }, s.RemovePrompts, func(name string, pr exposedPrompt) {
		s.AddPrompt(pr.prompt, e.getPrompt(name))
	})
	syncList(was.resources, now.resources, func(r exposedResource) any { return r.resource }, s.RemoveResources, func(uri string, r exposedResource) {
		s.AddResource(r.resource, e.readResource(uri, false))
	})
	syncList(was.templates, now.templates, func(r exposedResource) any { return r.template }, s.RemoveResourceTemplates, func(uri string, r exposedResource) {
		s.AddResourceTemplate(r.template, e.readResource(uri, true))
	})
	e.cur.Store(p)
}

// deactivate is the active plugin's Close: the endpoint answers 503 and
// every call an error from then on. The lists stay as they were, for a
// plugin activated later to be compared with.
func (e *Endpoint) deactivate(p *Plugin) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cur.CompareAndSwap(p, nil)
}

// syncList brings one of the server's lists from was to now: what is gone
// is removed, what is new or declared differently is added. The SDK sends
// list_changed (debounced) only when it is told of a change, so an
// unchanged list sends nothing. The handlers the server holds look the
// active plugin up at each call, so an unchanged declaration needs no new
// handler.
func syncList[T any](was, now map[string]T, declared func(T) any, remove func(...string), add func(string, T)) {
	var gone []string
	for name := range was {
		if _, ok := now[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		remove(gone...)
	}
	for name, v := range now {
		if w, ok := was[name]; !ok || !sameJSON(declared(w), declared(v)) {
			add(name, v)
		}
	}
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// active is the plugin the endpoint serves, or an error saying there is
// none (its instance stopped).
func (e *Endpoint) active() (*Plugin, error) {
	if p := e.cur.Load(); p != nil {
		return p, nil
	}
	return nil, core.Errorf(core.CodeNotStarted, "mcpserver: the MCP endpoint is not serving (its bread instance stopped)")
}

// callTool runs the active plugin's tool name. A tool removed by a reload
// between the client's list and its call is TOOL_NOT_FOUND.
func (e *Endpoint) callTool(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		p, err := e.active()
		if err != nil {
			return errorResult(err), nil
		}
		t, ok := p.lists.tools[name]
		if !ok {
			return errorResult(&core.BreadError{Code: core.CodeToolNotFound, Message: "mcpserver: no tool " + name + " (the project was reloaded)"}), nil
		}
		return t.handler(ctx, req)
	}
}

func (e *Endpoint) getPrompt(name string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		p, err := e.active()
		if err != nil {
			return nil, err
		}
		pr, ok := p.lists.prompts[name]
		if !ok {
			return nil, core.Errorf(core.CodeNotFound, "mcpserver: no prompt %s (the project was reloaded)", name)
		}
		return pr.handler(ctx, req)
	}
}

func (e *Endpoint) readResource(key string, template bool) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		p, err := e.active()
		if err != nil {
			return nil, err
		}
		set := p.lists.resources
		if template {
			set = p.lists.templates
		}
		r, ok := set[key]
		if !ok {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		return r.handler(ctx, req)
	}
}

func (e *Endpoint) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p, err := e.active()
	if err != nil {
		return nil, err
	}
	return p.complete(ctx, req)
}

func (e *Endpoint) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	p, err := e.active()
	if err != nil {
		return err
	}
	return p.subscribe(ctx, req)
}

func (e *Endpoint) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	e.watched.add(req.Params.URI, -1)
	return nil
}
