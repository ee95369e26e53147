package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

// PluginName is the plugin's name.
const PluginName = "mcp_server"

// ActionRequest is the action of the MCP route: every method on Path. It is
// this module's, not core's (the seed's MCP_ACTIONS.request); an Authorize
// function allows or denies it like any core action.
const ActionRequest = "mcp.request"

// Actions lists the actions this plugin's routes use.
func Actions() []string { return []string{ActionRequest} }

// DefaultPath is where the Streamable HTTP endpoint is mounted.
const DefaultPath = "/mcp"

// DefaultSessionTimeout closes an idle stateful session.
const DefaultSessionTimeout = 30 * time.Minute

// DefaultStreamLifetime ends a session's GET stream, which its client then
// reopens.
const DefaultStreamLifetime = 30 * time.Second

// The transports of Options.Transport.
const (
	TransportHTTP  = "http"
	TransportStdio = "stdio"
)

// Options say what to expose and where.
type Options struct {
	// Agents are exposed by id: one MCP tool per agent, running it.
	Agents []string `json:"agents,omitempty"`
	// Skills are exposed as <agent>__<skill>: the agent run with that
	// skill active.
	Skills []SkillRef `json:"skills,omitempty"`
	// Tasks are exposed by name, run standalone through RunTask.
	Tasks []string `json:"tasks,omitempty"`
	// Tools are exposed directly, with no model in the loop: a plugin's
	// global tool by name, or {agent, tool} for one of an agent's own tools
	// (exposed as <agent>__<tool>).
	Tools []ToolRef `json:"tools,omitempty"`

	// Transport "http" (the default) mounts the Streamable HTTP endpoint
	// when bread serves HTTP; "stdio" mounts nothing, for a project meant
	// for `bread mcp`. ServeStdio works either way.
	Transport string `json:"transport,omitempty"`
	// Path is the HTTP endpoint (default /mcp).
	Path string `json:"path,omitempty"`
	// AllowedHosts are the host names (no port) the Host and Origin headers
	// may carry; empty allows the loopback names only (localhost,
	// 127.0.0.1, ::1). Set it when the server is reached under a real name.
	AllowedHosts []string `json:"allowedHosts,omitempty"`

	// RunTask runs a task standalone; exposing Tasks needs it. The bread
	// CLI sets it to engine.Instance.RunTask; in Go:
	//
	//	RunTask: func(ctx context.Context, _ core.Runtime, task string, args any) (any, error) {
	//		return inst.RunTask(ctx, task, args, engine.TaskOptions{AgentID: "mcp"})
	//	},
	RunTask func(ctx context.Context, rt core.Runtime, task string, args any) (any, error) `json:"-"`

	// Stateless serves every HTTP request without a session, as earlier
	// releases did: any replica answers any request, but a client on the
	// 2025-11-25 revision gets no elicitation (the server cannot send it a
	// request). By default an initialize opens a stateful session (kept by
	// this process) and sessionless requests are served statelessly.
	Stateless bool `json:"stateless,omitempty"`
	// SessionTimeout closes a stateful session idle for that long (default
	// 30 minutes; Go only); its client then initializes a new one.
	SessionTimeout time.Duration `json:"-"`
	// StreamLifetime ends a session's GET stream (default 30 seconds; Go
	// only): the client reconnects with Last-Event-ID and loses nothing, and
	// a server shutting down (or a `bread dev` reload) is not held open by
	// an idle stream.
	StreamLifetime time.Duration `json:"-"`

	// Name and Version identify the server to clients (default "bread").
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`

	// Endpoint, when set, is shared with other plugins (see Endpoint):
	// `bread dev` passes each reloaded project's plugin the one before's,
	// so clients keep their sessions. Nil: the plugin makes its own.
	Endpoint *Endpoint `json:"-"`
}

// SkillRef names an agent and one of its skills.
type SkillRef struct {
	Agent string `json:"agent"`
	Skill string `json:"skill"`
}

// ToolRef names a tool to expose directly: a plugin's global tool when
// Agent is empty, else one of that agent's tools. In JSON and YAML a bare
// string is a plugin tool.
type ToolRef struct {
	Agent string `json:"agent,omitempty"`
	Tool  string `json:"tool"`
}

// UnmarshalJSON reads "name" or {"agent": ..., "tool": ...}.
func (t *ToolRef) UnmarshalJSON(b []byte) error {
	var name string
	if json.Unmarshal(b, &name) == nil {
		*t = ToolRef{Tool: name}
		return nil
	}
	type plain ToolRef
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*t = ToolRef(p)
	return nil
}

// Plugin is the MCP server plugin.
type Plugin struct {
	opts   Options
	rt     core.Runtime
	log    *slog.Logger
	ep     *Endpoint
	closed atomic.Bool

	lists          lists                          // what Init built from the runtime
	documentAgents map[string]bool                // exposed agents with documents
	promptEnums    map[string]map[string][]string // prompt → argument → enum, for completion
	stopListen     func()
	authorizeRun   core.AuthorizeStreamFunc // UseOwnership's rule for a run's files
}

// lists are a plugin's tools, prompts, resources and resource templates,
// by name (URI, URI template), as Init built them.
type lists struct {
	tools     map[string]exposed
	prompts   map[string]exposedPrompt
	resources map[string]exposedResource
	templates map[string]exposedResource
}

var (
	_ core.BreadPlugin    = (*Plugin)(nil)
	_ core.PluginIniter   = (*Plugin)(nil)
	_ core.RoutesProvider = (*Plugin)(nil)
	_ core.PluginCloser   = (*Plugin)(nil)
)

// New checks the options that need no runtime; Init checks the rest.
func New(opts Options) (*Plugin, error) {
	switch opts.Transport {
	case "":
		opts.Transport = TransportHTTP
	case TransportHTTP, TransportStdio:
	default:
		return nil, core.Errorf(core.CodeInvalidConfig, "mcpserver: unknown transport %q (expected http or stdio)", opts.Transport)
	}
	if opts.Path == "" {
		opts.Path = DefaultPath
	}
	if opts.Path[0] != '/' {
		return nil, core.Errorf(core.CodeInvalidConfig, "mcpserver: path %q must start with /", opts.Path)
	}
	if opts.SessionTimeout < 0 {
		return nil, core.Errorf(core.CodeInvalidConfig, "mcpserver: sessionTimeout %s is negative", opts.SessionTimeout)
	}
	if opts.SessionTimeout == 0 {
		opts.SessionTimeout = DefaultSessionTimeout
	}
	if opts.StreamLifetime <= 0 {
		opts.StreamLifetime = DefaultStreamLifetime
	}
	if opts.Name == "" {
		opts.Name = "bread"
	}
	if opts.Version == "" {
		opts.Version = "1"
	}
	if len(opts.Tasks) > 0 && opts.RunTask == nil {
		return nil, core.Errorf(core.CodeInvalidConfig, "mcpserver: exposing tasks needs Options.RunTask (the bread CLI sets it)")
	}
	ep := opts.Endpoint
	if ep == nil {
		ep = NewEndpoint()
	}
	return &Plugin{opts: opts, ep: ep}, nil
}

// Name implements core.BreadPlugin.
func (p *Plugin) Name() string { return PluginName }

// Init builds the tools, prompts and resources from what the runtime has:
// an unknown agent, skill, task or tool fails the boot, and so do two
// exposed tools with one name (TOOL_NAME_COLLISION). The first plugin of
// an endpoint builds the MCP server and is activated; a later one waits
// for Activate.
func (p *Plugin) Init(_ context.Context, rt core.Runtime) error {
	p.rt = rt
	p.log = rt.Logger()
	if p.log == nil {
		p.log = slog.Default()
	}
	l, err := p.build()
	if err != nil {
		return err
	}
	p.lists = l
	if err := p.ep.open(p); err != nil {
		return err
	}
	p.stopListen = rt.On(p.transcriptChanged)
	return nil
}

// Server returns the MCP server of the plugin's endpoint, for a transport
// of your own; nil before Init.
func (p *Plugin) Server() *mcp.Server {
	p.ep.mu.Lock()
	defer p.ep.mu.Unlock()
	return p.ep.server
}

// Routes implements core.RoutesProvider: the Streamable HTTP endpoint at
// Path for every method, under ActionRequest.
func (p *Plugin) Routes(r core.Router) {
	if p.opts.Transport != TransportHTTP {
		return
	}
	r.Handle(ActionRequest, "*", p.opts.Path, http.HandlerFunc(p.serveHTTP))
}

// ServeStdio serves one MCP client over r and w (the process's stdin and
// stdout for `bread mcp`) until the client disconnects or ctx ends.
func (p *Plugin) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	s := p.Server()
	if s == nil {
		return core.Errorf(core.CodeNotStarted, "mcpserver: Init has not run")
	}
	err := s.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{w}})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// Close implements core.PluginCloser. When p is the plugin its endpoint
// serves, the HTTP endpoint answers 503 from then on; a plugin another
// has replaced (a retired `bread dev` generation) leaves the endpoint be.
func (p *Plugin) Close(context.Context) error {
	p.closed.Store(true)
	p.ep.deactivate(p)
	if p.stopListen != nil {
		p.stopListen()
	}
	return nil
}
