package mcpclient

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/breadai/bread/core"
)

// Plugin is the MCP client plugin. Build it with New and add it to
// engine.Config.Plugins (or name `type: mcpclient` under plugins: in
// bread.yaml).
type Plugin struct {
	opts    Options
	servers map[string]*Server

	ctx    context.Context
	cancel context.CancelFunc
	log    *slog.Logger
	creds  core.CredentialProvider

	mu       sync.Mutex
	conns    map[string]*conn // declared servers, by name
	external map[string]*conn // inline servers, by name and URL
	closed   bool

	flights flights // tool calls in progress and those parked on a human

	agents    map[string]*core.Agent // by id, for sampling
	samplers  map[string]bool        // server names some agent lets sample
	providers core.ProviderRegistry
	bus       *core.Bus // to learn that a run waiting on a question ended
}

var (
	_ core.BreadPlugin        = (*Plugin)(nil)
	_ core.PluginIniter       = (*Plugin)(nil)
	_ core.AgentToolsResolver = (*Plugin)(nil)
	_ core.AgentToolNamer     = (*Plugin)(nil)
	_ core.PluginCloser       = (*Plugin)(nil)
)

// New validates the declared servers (names, transports, urls) without
// connecting: Init connects.
func New(opts Options) (*Plugin, error) {
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 10 * time.Second
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 250 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 30 * time.Second
	}
	opts.MaxBackoff = max(opts.MaxBackoff, opts.Backoff)
	if opts.ElicitationTimeout <= 0 {
		opts.ElicitationTimeout = time.Hour
	}
	p := &Plugin{opts: opts, servers: map[string]*Server{}}
	for i := range opts.Servers {
		s := opts.Servers[i]
		if err := s.check("mcpclient servers"); err != nil {
			return nil, err
		}
		if _, dup := p.servers[s.Name]; dup {
			return nil, core.Errorf(core.CodeInvalidConfig, "mcpclient: two servers are named %s", s.Name)
		}
		p.servers[s.Name] = &s
	}
	return p, nil
}

// Name implements core.BreadPlugin.
func (p *Plugin) Name() string { return PluginName }

// Init checks every agent's configuration of the plugin (a server that is
// not declared, a malformed inline server), then connects every declared
// server concurrently and waits for each one's first attempt. A server that
// fails is logged with its name and the reason and retried in the
// background; it never fails Init or the other servers.
func (p *Plugin) Init(ctx context.Context, rt core.Runtime) error {
	p.log = rt.Logger()
	if p.log == nil {
		p.log = slog.Default()
	}
	p.creds = p.opts.Credentials
	if p.creds == nil {
		if cp, ok := rt.(interface {
			Credentials() core.CredentialProvider
		}); ok {
			p.creds = cp.Credentials()
		}
	}
	if p.creds == nil {
		p.creds = core.EnvCredentials()
	}
	p.bus = rt.Bus()
	p.providers = p.opts.Providers
	if p.providers == nil {
		if pp, ok := rt.(interface{ Providers() core.ProviderRegistry }); ok {
			p.providers = pp.Providers()
		}
	}
	p.agents, p.samplers = map[string]*core.Agent{}, map[string]bool{}
	for _, a := range rt.Agents() {
		if err := p.checkAgent(a); err != nil {
			return err
		}
		p.agents[a.ID] = a
		cfg, _ := agentConfig(a)
		if cfg == nil {
			continue
		}
		for _, name := range cfg.Servers {
			if cfg.samples(name) {
				p.samplers[name] = true
			}
		}
		for _, e := range cfg.External {
			if cfg.samples(e.Name) {
				p.samplers[e.Name] = true
			}
		}
	}
	p.ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	p.mu.Lock()
	p.conns = map[string]*conn{}
	p.external = map[string]*conn{}
	for name, s := range p.servers {
		c := newConn(p, *s)
		p.conns[name] = c
		go c.loop()
	}
	conns := make([]*conn, 0, len(p.conns))
	for _, c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	wait, cancel := context.WithTimeout(ctx, p.opts.ConnectTimeout+time.Second)
	defer cancel()
	for _, c := range conns {
		select {
		case <-c.first:
		case <-wait.Done():
		}
	}
	return nil
}

func (p *Plugin) checkAgent(a *core.Agent) error {
	cfg, err := agentConfig(a)
	if err != nil || cfg == nil {
		return err
	}
	for _, name := range cfg.Servers {
		if _, ok := p.servers[name]; !ok {
			known := make([]string, 0, len(p.servers))
			for n := range p.servers {
				known = append(known, n)
			}
			slices.Sort(known)
			return &core.BreadError{
				Code:    core.CodeInvalidConfig,
				Message: "agent " + a.ID + " uses MCP server " + name + ", which is not declared in the mcpclient plugin's servers",
				Context: map[string]any{"agentId": a.ID, "server": name, "declared": known},
			}
		}
	}
	for i, e := range cfg.External {
		s := e.server()
		if err := s.check("agent " + a.ID + " plugins.mcp_client.external"); err != nil {
			return err
		}
		_ = i
	}
	return nil
}

// ResolveAgentTools implements core.AgentToolsResolver: the tools of every
// server the agent names, declared or inline. A server that is down keeps
// its last tools (a call fails with TOOL_ERROR until it is back); one that
// never connected contributes none, with a warning. Two tools of a server
// that sanitise to one name fail the run with the engine's
// TOOL_NAME_COLLISION.
func (p *Plugin) ResolveAgentTools(ctx context.Context, a *core.Agent) ([]core.Tool, error) {
	cfg, err := agentConfig(a)
	if err != nil || cfg == nil {
		return nil, err
	}
	var conns []*conn
	for _, name := range cfg.Servers {
		c, err := p.declared(name)
		if err != nil {
			return nil, err
		}
		conns = append(conns, c)
	}
	for _, e := range cfg.External {
		c, err := p.inline(e)
		if err != nil {
			return nil, err
		}
		conns = append(conns, c)
	}
	var tools []core.Tool
	for _, c := range conns {
		select {
		case <-c.first:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		ts, err := c.snapshot()
		if ts == nil {
			reason := "not connected"
			if err != nil {
				reason = err.Error()
			}
			p.log.Warn("bread: an MCP server the agent uses is unavailable; its tools are left out of this run", "plugin", PluginName, "agentId", a.ID, "server", c.cfg.Name, "reason", reason)
			continue
		}
		tools = append(tools, ts...)
	}
	return tools, nil
}

// AgentToolNames implements core.AgentToolNamer. An MCP server's tools are
// discovered when it connects, so what an agent can call is, for every
// server it names (declared or inline), the pattern <server>__*: a
// selector such as plugin:mcp_client/fs__read* passes the boot when the
// agent uses server fs, and plugin:mcp_client/fz__* (no such server for
// this agent) fails it. Whether the server really offers a tool named so is
// known only at run time.
func (p *Plugin) AgentToolNames(a *core.Agent) ([]string, error) {
	cfg, err := agentConfig(a)
	if err != nil || cfg == nil {
		return nil, err
	}
	names := make([]string, 0, len(cfg.Servers)+len(cfg.External))
	for _, s := range cfg.Servers {
		names = append(names, s+"__*")
	}
	for _, e := range cfg.External {
		names = append(names, e.Name+"__*")
	}
	return names, nil
}

func (p *Plugin) declared(name string) (*conn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.conns[name]
	if !ok {
		if p.conns == nil || p.closed {
			return nil, core.Errorf(core.CodeNotStarted, "the mcpclient plugin is not running")
		}
		return nil, core.Errorf(core.CodeInvalidConfig, "MCP server %s is not declared in the mcpclient plugin's servers", name)
	}
	return c, nil
}

// inline returns the connection of an agent's own server, starting it on
// first use; one per name and URL, whoever asks.
func (p *Plugin) inline(e ExternalServer) (*conn, error) {
	s := e.server()
	if err := s.check("plugins.mcp_client.external"); err != nil {
		return nil, err
	}
	key := e.Name + "\x00" + e.URL
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.external == nil || p.closed {
		return nil, core.Errorf(core.CodeNotStarted, "the mcpclient plugin is not running")
	}
	if c, ok := p.external[key]; ok {
		return c, nil
	}
	c := newConn(p, s)
	p.external[key] = c
	go c.loop()
	return c, nil
}

// watchRun cancels a parked question at its server when its run ends
// while it waits (POST /runs/{id}/cancel ends a suspended run with
// agent:error, on any replica): the run's frames on the bus, until the
// question leaves the park. A bus that cannot subscribe watches nothing;
// the question then lapses after ElicitationTimeout.
func (p *Plugin) watchRun(pa *parkedAsk) {
	if p.bus == nil || !p.bus.Has(core.BusSubscribe) {
		return
	}
	for fr, err := range p.bus.Subscribe(pa.ctx, pa.f.runID, 0) {
		if err != nil {
			return
		}
		if fr.Crumb != nil && core.IsTerminal(fr.Crumb.CrumbType()) {
			if p.flights.unpark(pa.f.key, pa) {
				p.log.Info("bread: a run waiting on an MCP server's question ended; cancelled the question at the server", "plugin", PluginName, "runId", pa.f.runID)
				p.flights.cancelParked(pa, p.opts.ConnectTimeout)
			}
			return
		}
	}
}

func (p *Plugin) agent(id string) (*core.Agent, bool) {
	a, ok := p.agents[id]
	return a, ok
}

// Close implements core.PluginCloser: every connection closes once (a stdio
// server's process is stopped).
func (p *Plugin) Close(context.Context) error {
	p.mu.Lock()
	if p.closed || p.cancel == nil {
		p.closed = true
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	all := make([]*conn, 0, len(p.conns)+len(p.external))
	for _, c := range p.conns {
		all = append(all, c)
	}
	for _, c := range p.external {
		all = append(all, c)
	}
	p.mu.Unlock()
	p.flights.closeAll()
	p.cancel()
	var wg sync.WaitGroup
	for _, c := range all {
		wg.Go(c.close)
	}
	wg.Wait()
	return nil
}
