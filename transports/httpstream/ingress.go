package httpstream

import (
	"context"
	"io"
	"iter"
	"log/slog"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/stream"
)

// DefaultHeartbeat is how often an idle passive stream sends a keep-alive,
// comfortably under the 30 to 60 s idle timeouts of common proxies.
const DefaultHeartbeat = 15 * time.Second

// Options configure an Ingress. Zero values take the defaults.
type Options struct {
	// AuthorizeStream, when set, decides whether a caller may read a run's
	// crumbs. It runs after the server granted the route's action, on
	// GET /runs/{runId}/stream (and the server's cancel route); false is
	// 403 before any crumb is read. The identity is the one an auth strategy
	// stored, nil without auth.
	AuthorizeStream core.AuthorizeStreamFunc
	// Heartbeat is the keep-alive interval of the passive stream (default
	// 15 s).
	Heartbeat time.Duration
	// Bus carries the frames this transport publishes and subscribes to:
	// the embedded core/stream transport by default (one process); a shared
	// bus such as Redis fans crumbs out across replicas.
	Bus core.BreadTransport
	// Logger receives failures that cannot reach a client; nil uses the
	// instance's logger.
	Logger *slog.Logger
	// Liveness, when set, tells whether a run is still running somewhere
	// (a replica holds its lease). A passive stream whose run started, is not
	// waiting for a human, and is no longer alive ends with agent:error
	// RUN_LOST instead of waiting forever. With replicas, set it to the
	// cluster coordinator (transports/redis.Coordinator).
	Liveness Liveness
	// LivenessInterval is how often an idle passive stream asks Liveness
	// (default 2 s).
	LivenessInterval time.Duration
}

// Liveness reports whether a run is still executing on some replica. An
// error means "cannot tell" and never ends a stream.
type Liveness interface {
	Alive(ctx context.Context, runID string) (bool, error)
}

// DefaultLivenessInterval is how often an idle passive stream checks its run
// is alive.
const DefaultLivenessInterval = 2 * time.Second

// Ingress is a BreadTransport that also serves bread's streaming HTTP
// routes in one wire Format. Publishing and subscribing are delegated to
// its bus.
type Ingress struct {
	format    Format
	bus       core.BreadTransport
	authorize core.AuthorizeStreamFunc
	heartbeat time.Duration
	log       *slog.Logger
	liveness  Liveness
	livecheck time.Duration
}

var (
	_ core.BreadTransport = (*Ingress)(nil)
	_ core.Subscriber     = (*Ingress)(nil)
	_ core.Mounter        = (*Ingress)(nil)
	_ core.Starter        = (*Ingress)(nil)
	_ io.Closer           = (*Ingress)(nil)
)

// New returns an Ingress speaking format.
func New(format Format, opts Options) *Ingress {
	g := &Ingress{
		format:    format,
		bus:       opts.Bus,
		authorize: opts.AuthorizeStream,
		heartbeat: opts.Heartbeat,
		log:       opts.Logger,
		liveness:  opts.Liveness,
		livecheck: opts.LivenessInterval,
	}
	if g.livecheck <= 0 {
		g.livecheck = DefaultLivenessInterval
	}
	if g.bus == nil {
		g.bus = stream.New(stream.Options{})
	}
	if g.heartbeat <= 0 {
		g.heartbeat = DefaultHeartbeat
	}
	return g
}

// Capability reports the bus's capability.
func (g *Ingress) Capability() core.Capability { return g.bus.Capability() }

// Publish hands f to the bus.
func (g *Ingress) Publish(ctx context.Context, f core.Frame) error { return g.bus.Publish(ctx, f) }

// Subscribe tails a run on the bus. A bus that cannot subscribe yields
// TRANSPORT_NOT_CONFIGURED.
func (g *Ingress) Subscribe(ctx context.Context, runID string, afterSeq int64) iter.Seq2[core.Frame, error] {
	if s, ok := g.bus.(core.Subscriber); ok {
		return s.Subscribe(ctx, runID, afterSeq)
	}
	return func(yield func(core.Frame, error) bool) {
		yield(core.Frame{}, &core.BreadError{Code: core.CodeTransportNotConfigured, Message: "the transport's bus cannot subscribe"})
	}
}

// Start starts the bus when it opens connections.
func (g *Ingress) Start(ctx context.Context) error {
	if s, ok := g.bus.(core.Starter); ok {
		return s.Start(ctx)
	}
	return nil
}

// Close closes the bus when it holds resources.
func (g *Ingress) Close() error {
	if c, ok := g.bus.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// AuthorizeStream applies Options.AuthorizeStream; without one every caller
// may read every run. The server's cancel route calls it too.
func (g *Ingress) AuthorizeStream(ctx context.Context, identity *core.AuthIdentity, runID string) bool {
	return g.authorize == nil || g.authorize(ctx, identity, runID)
}

// Mount adds the streaming routes, each named by its core action.
func (g *Ingress) Mount(r core.Router, inst core.Runtime) {
	log := g.log
	if log == nil {
		log = inst.Logger()
	}
	if _, ok := inst.Store().(core.CrumbLog); !ok {
		log.Info("bread: the store keeps no crumb log; GET /runs/{runId}/stream serves live frames only, without Last-Event-ID catch-up")
	}
	h := &handlers{g: g, inst: inst, log: log}
	r.Handle(core.ActionRunStart, "POST", "/agents/{id}/run", h.run())
	r.Handle(core.ActionPipelineStart, "POST", "/pipelines/{id}/run", h.pipeline())
	r.Handle(core.ActionRunResume, "POST", "/resume/{checkpointId}", h.resume())
	r.Handle(core.ActionRunStream, "GET", "/runs/{runId}/stream", h.passive())
}

// handlers serve the mounted routes of one Instance.
type handlers struct {
	g    *Ingress
	inst core.Runtime
	log  *slog.Logger
}
