package agui

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/breadai/bread/core"
)

// PluginName is the plugin's name.
const PluginName = "ag_ui"

// ActionRun is the action of the run route (POST at Path). It is this
// module's, not core's (the seed's AG_UI_ACTIONS.run); an Authorize function
// allows or denies it like any core action, and AuthorizeThread still runs
// after that grant.
const ActionRun = "agui.run"

// Actions lists the actions this plugin's routes use.
func Actions() []string { return []string{ActionRun} }

// DefaultPath is where the run route is mounted.
const DefaultPath = "/ag-ui/run"

// AuthorizeThreadFunc decides whether a caller may run on, and so read and
// write the history of, a thread (a bread session). identity is what the
// server's auth strategy stored, nil without auth.
type AuthorizeThreadFunc func(ctx context.Context, identity *core.AuthIdentity, threadID string) bool

// Options configure the plugin.
type Options struct {
	// Agent is the agent a RunAgentInput runs (required); it must be an
	// entrypoint. Mount the plugin again, on another Path, for another
	// agent.
	Agent string `json:"agent"`
	// Path is the route (default /ag-ui/run).
	Path string `json:"path,omitempty"`
	// AuthorizeThread, when set, runs after the server granted ActionRun:
	// false is 403 FORBIDDEN before any run starts. Without it the
	// threadId is used as the session id with no ownership check: any
	// caller allowed ActionRun may continue any thread it can name.
	AuthorizeThread AuthorizeThreadFunc `json:"-"`
	// MaxBodyBytes caps the body this route reads (default 1 MiB); the
	// server's own cap applies first.
	MaxBodyBytes int64 `json:"maxBodyBytes,omitempty"`
	// Heartbeat is the longest silence on an open event stream: while the
	// run is quiet (a slow model, a long tool) a `: ping` comment goes out,
	// so proxies with an idle timeout keep the connection (default
	// DefaultHeartbeat; negative sends none).
	Heartbeat time.Duration `json:"-"`
}

// DefaultHeartbeat is the default of Options.Heartbeat, the server's own
// stream heartbeat.
const DefaultHeartbeat = 15 * time.Second

// DefaultMaxBodyBytes is the default of Options.MaxBodyBytes.
const DefaultMaxBodyBytes = 1 << 20

// Plugin is the AG-UI plugin: the run route over a Runtime.
type Plugin struct {
	opts   Options
	rt     core.Runtime
	log    *slog.Logger
	closed atomic.Bool
}

var (
	_ core.BreadPlugin    = (*Plugin)(nil)
	_ core.PluginIniter   = (*Plugin)(nil)
	_ core.RoutesProvider = (*Plugin)(nil)
	_ core.PluginCloser   = (*Plugin)(nil)
)

// New checks the options that need no runtime; Init checks the agent.
func New(opts Options) (*Plugin, error) {
	if opts.Agent == "" {
		return nil, core.Errorf(core.CodeInvalidConfig, "agui: agent is required: the agent a RunAgentInput runs")
	}
	if opts.Path == "" {
		opts.Path = DefaultPath
	}
	if opts.Path[0] != '/' {
		return nil, core.Errorf(core.CodeInvalidConfig, "agui: path %q must start with /", opts.Path)
	}
	if opts.MaxBodyBytes < 0 {
		return nil, core.Errorf(core.CodeInvalidConfig, "agui: maxBodyBytes must not be negative")
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	return &Plugin{opts: opts}, nil
}

// Name implements core.BreadPlugin.
func (p *Plugin) Name() string { return PluginName }

// Init implements core.PluginIniter: an agent that does not exist is
// AGENT_NOT_FOUND, one that is not an entrypoint INVALID_CONFIG.
func (p *Plugin) Init(_ context.Context, rt core.Runtime) error {
	if _, ok := rt.Agent(p.opts.Agent); !ok {
		return core.Errorf(core.CodeAgentNotFound, "agui: agent %q does not exist", p.opts.Agent)
	}
	if !rt.Entrypoint(p.opts.Agent) {
		return core.Errorf(core.CodeInvalidConfig, "agui: agent %q is not an entrypoint", p.opts.Agent)
	}
	p.rt = rt
	p.log = rt.Logger()
	if p.log == nil {
		p.log = slog.Default()
	}
	return nil
}

// Routes implements core.RoutesProvider: POST Path under ActionRun.
func (p *Plugin) Routes(r core.Router) {
	r.Handle(ActionRun, http.MethodPost, p.opts.Path, http.HandlerFunc(p.serveRun))
}

// Close implements core.PluginCloser: the route answers 503 from then on.
func (p *Plugin) Close(context.Context) error {
	p.closed.Store(true)
	return nil
}
