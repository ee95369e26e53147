package a2a

import (
	"context"
	"encoding/json"
	"google.golang.org/grpc"
	"log/slog"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine/webhook"
)

// PluginName is the plugin's name.
const PluginName = "a2a"

// The actions of this plugin's routes. They are this module's, not core's
// (the seed's A2A_ACTIONS.card and A2A_ACTIONS.rpc); an Authorize function
// allows or denies them like any core action.
const (
	// ActionCard is GET at CardPath: the Agent Card.
	ActionCard = "a2a.card"
	// ActionRPC is POST at the path of URL: every JSON-RPC method.
	ActionRPC = "a2a.rpc"
)

// Actions lists the actions this plugin's routes use.
func Actions() []string { return []string{ActionCard, ActionRPC} }

// DefaultCardPath is where the Agent Card is served unless CardPath says
// otherwise: the spec's well-known location.
const DefaultCardPath = a2asrv.WellKnownAgentCardPath

// ProtocolVersion is the A2A spec version this package speaks.
const ProtocolVersion = "0.3.0"

// Canceller cancels a run wherever it runs and reports whether it was found
// (a cluster coordinator, such as transports/redis's, is one). Without one,
// tasks/cancel reaches only the runs of this replica.
type Canceller interface {
	Cancel(ctx context.Context, runID string) (bool, error)
}

// Options configure the plugin.
type Options struct {
	// Agent is the agent a message runs (required); it must be an
	// entrypoint. Mount the plugin again, with another URL and CardPath,
	// for another agent.
	Agent string `json:"agent"`
	// URL is where clients send JSON-RPC requests (required), as the Agent
	// Card advertises it: an absolute http(s) URL, whose path is the route
	// this plugin serves, or a path alone ("/a2a"), in which case the card
	// advertises it on the scheme and host the card was requested with.
	URL string `json:"url"`
	// CardPath is where the Agent Card is served (default
	// /.well-known/agent-card.json). Two mounts in one server need two
	// paths.
	CardPath string `json:"cardPath,omitempty"`
	// Name and Description override the card's (default: the agent's id
	// and description, else the first line of its prompt).
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// SpecVersion is the A2A version this mount speaks: "0.3" (the
	// default, on a2a-go's JSON-RPC handler) or "1.0" (its JSON-RPC
	// binding: PascalCase methods, TASK_STATE_* states, parts told apart by
	// member, the card's supportedInterfaces). Mount twice, with distinct
	// url and cardPath, to speak both.
	SpecVersion string `json:"specVersion,omitempty"`
	// Version is the card's agent version (default "1.0.0").
	Version string `json:"version,omitempty"`
	// AuthorizeTask decides whether a caller may read, resubscribe to,
	// cancel or answer a task (Go only); it runs after the server granted
	// ActionRPC, and false answers as if the task did not exist. nil: with
	// auth, only the identity that started the task's run (its record's
	// StartedBy, by core.OwnerKey); without auth (no identity), anyone.
	AuthorizeTask core.AuthorizeStreamFunc `json:"-"`
	// Canceller cancels runs on any replica (Go only; the CLI sets the
	// cluster coordinator when the bus is Redis). nil cancels runs of
	// this replica only.
	Canceller Canceller `json:"-"`
	// Heartbeat is the longest silence on an open event stream
	// (message/stream, tasks/resubscribe and their v1.0 names): while the
	// run is quiet (a slow model, a long tool, a wait for input on a
	// delegated run) a `: keep-alive` comment goes out, so proxies with an
	// idle timeout keep the connection. Default DefaultHeartbeat; negative
	// sends none.
	Heartbeat time.Duration `json:"-"`
	// Push delivers push notifications (Go only): with it the card
	// advertises capabilities.pushNotifications and the push notification
	// config methods (v0.3 tasks/pushNotificationConfig/*, v1.0
	// *TaskPushNotificationConfig*) and a message's push config work;
	// receivers are checked by its guard, deliveries signed when it has a
	// secret and retried as it says. The plugin does not close it. nil:
	// see PushNotifications.
	Push *webhook.Sender `json:"-"`
	// PushNotifications, when Push is nil, delivers push notifications
	// through the engine's webhook sender (engine.Instance.WebhookSender,
	// configured by bread.yaml's webhooks section: secret, allowHosts,
	// allowPrivateNetworks, maxAttempts, backoff). False and no Push: push
	// is not supported.
	PushNotifications bool `json:"pushNotifications,omitempty"`
	// ExtendedCard serves the authenticated extended Agent Card: the public
	// card then shows the agent's name and description with one skill
	// naming the agent, and says the extended card exists; an identified
	// caller's extended card adds the agent's skills and its input and
	// output JSON Schemas. A caller without an identity is refused (HTTP
	// 401). False: the method answers not configured (v0.3, -32007) or
	// unsupported (v1.0, -32004), and the public card shows everything.
	ExtendedCard bool `json:"extendedCard,omitempty"`
	// GRPC serves the gRPC binding too (spec v0.3 only: a2a-go's
	// a2agrpc over the proto's a2a.v1.A2AService): POST
	// /a2a.v1.A2AService/{method} under ActionRPC, on the server's own
	// listener (it speaks h2c beside HTTP/1.1), and the card lists it in
	// additionalInterfaces. Off by default: the service's routes are the
	// proto's, not under URL, so one mount per server may serve them.
	GRPC bool `json:"grpc,omitempty"`
}

// Plugin is the A2A plugin: the card and JSON-RPC routes over a Runtime.
type Plugin struct {
	opts    Options
	rpcPath string
	rt      core.Runtime
	runs    *core.Storage
	agent   *core.Agent
	log     *slog.Logger
	rpc     http.Handler
	closed  atomic.Bool
	push    *pusher // nil without Options.Push
	// tasks keeps the tasks read so far built, so a read applies only
	// what their logs gained since (nil: every read replays the log).
	tasks *taskCache
	// grpc serves the gRPC binding (nil without Options.GRPC, or before
	// Init).
	grpc *grpc.Server
}

var (
	_ core.BreadPlugin    = (*Plugin)(nil)
	_ core.PluginIniter   = (*Plugin)(nil)
	_ core.RoutesProvider = (*Plugin)(nil)
	_ core.PluginCloser   = (*Plugin)(nil)
)

// New checks the options that need no runtime; Init checks the agent and
// the store.
func New(opts Options) (*Plugin, error) {
	if opts.Agent == "" {
		return nil, core.Errorf(core.CodeInvalidConfig, "a2a: agent is required: the agent a message runs")
	}
	if opts.URL == "" {
		return nil, core.Errorf(core.CodeInvalidConfig, "a2a: url is required: where clients send JSON-RPC requests (an absolute URL or a path)")
	}
	u, err := url.Parse(opts.URL)
	if err != nil {
		return nil, core.Errorf(core.CodeInvalidConfig, "a2a: url %q is not a URL: %v", opts.URL, err)
	}
	rpcPath := u.Path
	switch {
	case u.Scheme == "" && u.Host == "":
		if rpcPath == "" || rpcPath[0] != '/' {
			return nil, core.Errorf(core.CodeInvalidConfig, "a2a: url %q must be an absolute http(s) URL or a path starting with /", opts.URL)
		}
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return nil, core.Errorf(core.CodeInvalidConfig, "a2a: url %q must be an absolute http(s) URL or a path starting with /", opts.URL)
	}
	if rpcPath == "" {
		rpcPath = "/"
	}
	if opts.CardPath == "" {
		opts.CardPath = DefaultCardPath
	}
	if opts.CardPath[0] != '/' {
		return nil, core.Errorf(core.CodeInvalidConfig, "a2a: cardPath %q must start with /", opts.CardPath)
	}
	if opts.CardPath == rpcPath {
		return nil, core.Errorf(core.CodeInvalidConfig, "a2a: cardPath and the path of url are both %q; they must differ", rpcPath)
	}
	if opts.Version == "" {
		opts.Version = "1.0.0"
	}
	switch opts.SpecVersion {
	case "":
		opts.SpecVersion = SpecV03
	case SpecV03, SpecV1:
	default:
		return nil, core.Errorf(core.CodeInvalidConfig, "a2a: specVersion %q is not one of %q, %q", opts.SpecVersion, SpecV03, SpecV1)
	}
	if opts.SpecVersion == SpecV1 && rpcPath == "/" {
		// The HTTP+JSON routes go under the url's path: at / they would be
		// /tasks and /tasks/{id}, bread's own routes.
		return nil, core.Errorf(core.CodeInvalidConfig, "a2a: a specVersion 1.0 mount needs a url with a path other than /, such as /a2a: its HTTP+JSON routes (/tasks, /message:send) go under it")
	}
	if opts.GRPC && opts.SpecVersion != SpecV03 {
		return nil, core.Errorf(core.CodeInvalidConfig, "a2a: grpc serves the v0.3 proto (a2a.v1.A2AService, a2a-go's); a specVersion 1.0 mount has no gRPC binding")
	}
	return &Plugin{opts: opts, rpcPath: rpcPath}, nil
}

// UseOwnership makes f the rule of AuthorizeTask when Options leave it
// nil: the CLI passes the server's run-ownership policy, so the admins and
// the strategies with ownership off that may act on every run may act on
// every task too. Call it before the server serves.
func (p *Plugin) UseOwnership(f core.AuthorizeStreamFunc) {
	if p.opts.AuthorizeTask == nil {
		p.opts.AuthorizeTask = f
	}
}

// Name implements core.BreadPlugin.
func (p *Plugin) Name() string { return PluginName }

// Init implements core.PluginIniter: an agent that does not exist is
// AGENT_NOT_FOUND, one that is not an entrypoint INVALID_CONFIG, a store
// that keeps no run records (core.RunStore) INVALID_CONFIG: tasks are read
// back from them.
func (p *Plugin) Init(_ context.Context, rt core.Runtime) error {
	ag, ok := rt.Agent(p.opts.Agent)
	if !ok {
		return core.Errorf(core.CodeAgentNotFound, "a2a: agent %q does not exist", p.opts.Agent)
	}
	if !rt.Entrypoint(p.opts.Agent) {
		return core.Errorf(core.CodeInvalidConfig, "a2a: agent %q is not an entrypoint", p.opts.Agent)
	}
	runs := rt.Storage()
	if !runs.Has(core.StoreRuns) {
		return core.Errorf(core.CodeInvalidConfig, "a2a: the store keeps no run records (core.RunStore); A2A tasks are read back from them")
	}
	p.rt, p.runs, p.agent = rt, runs, ag
	p.tasks = newTaskCache()
	p.log = rt.Logger()
	if p.log == nil {
		p.log = slog.Default()
	}
	send := p.opts.Push
	if send == nil && p.opts.PushNotifications {
		ws, ok := rt.(webhookSenderOf)
		if !ok || ws.WebhookSender() == nil {
			return core.Errorf(core.CodeInvalidConfig, "a2a: pushNotifications needs the engine's webhook sender; this runtime has none (pass Options.Push)")
		}
		send = ws.WebhookSender()
	}
	if p.opts.SpecVersion == SpecV1 {
		if send != nil {
			p.push = newPusher(send, p.pushConfigs(), func(t *a2a.Task) ([]byte, error) { return json.Marshal(map[string]any{"task": v1Task(t)}) }, p.log)
		}
		p.rpc = v1{&handler{p: p}}
	} else {
		if send != nil {
			p.push = newPusher(send, p.pushConfigs(), func(t *a2a.Task) ([]byte, error) { return json.Marshal(t) }, p.log)
		}
		p.rpc = a2asrv.NewJSONRPCHandler(&handler{p: p})
		if p.opts.GRPC {
			p.grpc = newGRPCServer(&handler{p: p})
		}
	}
	return nil
}

// pushConfigs is where the mount keeps push configs: the store's run
// subscriptions when it has them (durable, shared by the replicas), else
// this replica's memory.
func (p *Plugin) pushConfigs() pushConfigs {
	if st := p.rt.Storage(); st.Has(core.StoreRunSubscriptions) {
		return &storedPushConfigs{st: st, mount: p.rpcPath}
	}
	return newMemPushConfigs()
}

// webhookSenderOf is a runtime that lends its webhook sender
// (*engine.Instance).
type webhookSenderOf interface {
	WebhookSender() *webhook.Sender
}

// Routes implements core.RoutesProvider: GET CardPath under ActionCard and
// POST at the path of URL under ActionRPC; a v1.0 mount adds the routes of
// the HTTP+JSON binding under that path, under ActionRPC too.
func (p *Plugin) Routes(r core.Router) {
	r.Handle(ActionCard, http.MethodGet, p.opts.CardPath, http.HandlerFunc(p.serveCard))
	r.Handle(ActionRPC, http.MethodPost, p.rpcPath, http.HandlerFunc(p.serveRPC))
	if p.opts.SpecVersion == SpecV1 {
		p.restRoutes(r)
	}
	if p.opts.GRPC {
		r.Handle(ActionRPC, http.MethodPost, GRPCPath, grpcMount{p})
	}
}

// Close implements core.PluginCloser: the routes answer 503 from then on.
func (p *Plugin) Close(context.Context) error {
	p.closed.Store(true)
	if p.grpc != nil {
		p.grpc.Stop() // ends the gRPC streams still open
	}
	if p.push != nil {
		p.push.close()
	}
	return nil
}

func (p *Plugin) serveRPC(w http.ResponseWriter, r *http.Request) {
	if p.closed.Load() || p.rpc == nil {
		w.Header().Set("Retry-After", "5")
		http.Error(w, "the A2A endpoint is not running", http.StatusServiceUnavailable)
		return
	}
	if r.Header.Get(core.DelegationDepthHeader) != "" {
		// Another bread server's remote agent: its run's delegation
		// depth, bounded, is where this task starts.
		r = r.WithContext(core.DelegationFromHeader(r.Context(), r.Header))
	}
	r = r.WithContext(withCardURL(r.Context(), p.advertised(r)))
	serve := func(r *http.Request) { serveWithHeartbeat(p.rpc, flusher{w}, r, p.heartbeat()) }
	if p.opts.SpecVersion == SpecV03 && (p.push != nil || p.opts.ExtendedCard) {
		// a2a-go answers these two methods in ways the spec does not:
		// see servePeeked.
		p.servePeeked(w, r, serve)
		return
	}
	serve(r)
}

// flusher gives a2a-go's SSE writer the http.Flusher it asserts, whatever
// middleware wrapped the ResponseWriter (it flushes through Unwrap).
type flusher struct{ http.ResponseWriter }

func (f flusher) Flush() { _ = http.NewResponseController(f.ResponseWriter).Flush() }

func (f flusher) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// taskInfo is the a2a-go view of a task's ids.
func taskInfo(runID, sessionID string) a2a.TaskInfo {
	return a2a.TaskInfo{TaskID: a2a.TaskID(runID), ContextID: sessionID}
}

// CardPath is where the plugin serves its Agent Card.
func (p *Plugin) CardPath() string { return p.opts.CardPath }

// newMapper is a mapper for a task of this plugin's runtime.
func (p *Plugin) newMapper(info a2a.TaskInfo) *mapper { return newMapper(info, p.answerSchema) }

// answerSchema is the answer schema of agentID's human tool named tool (as
// the model calls it), nil when there is none.
func (p *Plugin) answerSchema(agentID, tool string) json.RawMessage {
	ag, ok := p.rt.Agent(agentID)
	if !ok {
		return nil
	}
	for _, h := range ag.HumanTools {
		if h.Name == tool || core.LeafName(core.ToolOrigin{Scope: core.ScopeHuman, Name: h.Name}) == tool {
			return h.Schema
		}
	}
	return nil
}
