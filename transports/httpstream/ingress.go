package httpstream

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/breadai/bread/core"
)

// DefaultHeartbeat is how often an idle passive stream sends a keep-alive,
// comfortably under the 30 to 60 s idle timeouts of common proxies.
const DefaultHeartbeat = 15 * time.Second

// DefaultLivenessInterval is how often an idle passive stream checks its run
// is alive.
const DefaultLivenessInterval = 2 * time.Second

// Options configure an Ingress. Zero values take the defaults.
type Options struct {
	// AuthorizeStream, when set, decides whether a caller may read a run's
	// crumbs. It runs after the server granted the route's action, on
	// GET /runs/{runId}/stream (and the server's cancel route); false is
	// 403 before any crumb is read. The identity is the one an auth strategy
	// stored, nil without auth.
	AuthorizeStream core.AuthorizeStreamFunc
	// StartHeaders, when set, adds headers to the response of a route that
	// runs (POST /agents/{id}/run, POST /pipelines/{id}/run,
	// POST /resume/{checkpointId}) once the run's id is known, before the
	// stream opens: the server's stream tokens use it. r carries the
	// caller's identity.
	StartHeaders func(r *http.Request, runID string, h http.Header)
	// Format is the stream format of a request whose Accept names neither
	// format (no Accept, */*): the configured transport's, NDJSON for
	// httpchunked and SSE for httpsse (nil is NDJSON). A request that asks
	// for NDJSON or SSE by name gets it.
	Format Format
	// Heartbeat bounds how long any stream stays silent, a run's while its
	// model thinks as well as a passive tail's (default 15 s): a keep-alive
	// goes out once a stream has been quiet for two thirds of it.
	Heartbeat time.Duration
	// Logger receives failures that cannot reach a client; nil uses the
	// Runtime's logger.
	Logger *slog.Logger
	// Liveness, when set, tells whether a run is still running somewhere
	// (a replica holds its lease). A passive stream whose run started, is not
	// waiting for a human, and is no longer alive ends with agent:error
	// RUN_LOST instead of waiting forever. Nil uses the store's run records
	// when the store is a core.RunStore (the engine marks a run lost when its
	// lease lapses and logs its RUN_LOST); the Redis cluster coordinator
	// (transports/redis.Coordinator) answers faster across replicas.
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

// Ingress serves bread's streaming HTTP routes in both formats, NDJSON and
// SSE, chosen per request from the Accept header, else Options.Format. It is a core.Mounter, not
// a bus: live frames come from the Runtime's bus (core.Runtime.Bus), history
// from its store's crumb log. One Ingress may be mounted for several
// Runtimes; it holds no per-Runtime state.
type Ingress struct {
	authorize core.AuthorizeStreamFunc
	headers   func(*http.Request, string, http.Header)
	format    Format
	heartbeat time.Duration
	log       *slog.Logger
	liveness  Liveness
	livecheck time.Duration
}

var _ core.Mounter = (*Ingress)(nil)

// New returns an Ingress.
func New(opts Options) *Ingress {
	g := &Ingress{
		authorize: opts.AuthorizeStream,
		headers:   opts.StartHeaders,
		format:    opts.Format,
		heartbeat: opts.Heartbeat,
		log:       opts.Logger,
		liveness:  opts.Liveness,
		livecheck: opts.LivenessInterval,
	}
	if g.livecheck <= 0 {
		g.livecheck = DefaultLivenessInterval
	}
	if g.format == nil {
		g.format = NDJSON{}
	}
	if g.heartbeat <= 0 {
		g.heartbeat = DefaultHeartbeat
	}
	return g
}

// AuthorizeStream applies Options.AuthorizeStream; without one every caller
// may read every run. The server's cancel route calls it too.
func (g *Ingress) AuthorizeStream(ctx context.Context, identity *core.AuthIdentity, runID string) bool {
	return g.authorize == nil || g.authorize(ctx, identity, runID)
}

// Mount adds the streaming routes, each named by its core action:
// POST /agents/{id}/run, POST /pipelines/{id}/run,
// POST /resume/{checkpointId} and GET /runs/{runId}/stream.
func (g *Ingress) Mount(r core.Router, rt core.Runtime) {
	log := g.log
	if log == nil {
		log = rt.Logger()
	}
	h := &handlers{g: g, inst: rt, log: log, liveness: g.liveness}
	st, bus := rt.Storage(), rt.Bus()
	if st.Has(core.StoreCrumbLog) {
		h.clog = st
	} else {
		log.Info("bread: the store keeps no crumb log; GET /runs/{runId}/stream serves live frames only, without Last-Event-ID catch-up")
	}
	if bus.Has(core.BusSubscribe) {
		h.bus = bus
	} else {
		log.Info("bread: the bus cannot subscribe; GET /runs/{runId}/stream serves the crumb log only, without live frames")
	}
	if st.Has(core.StoreRuns) {
		h.runs = st
		if h.liveness == nil {
			h.liveness = recordLiveness{st}
		}
	}
	r.Handle(core.ActionRunStart, "POST", "/agents/{id}/run", delegated(h.run()))
	r.Handle(core.ActionPipelineStart, "POST", "/pipelines/{id}/run", delegated(h.pipeline()))
	r.Handle(core.ActionRunResume, "POST", "/resume/{checkpointId}", h.resume())
	r.Handle(core.ActionRunStream, "GET", "/runs/{runId}/stream", h.passive())
}

// handlers serve the mounted routes of one Runtime.
type handlers struct {
	g        *Ingress
	inst     core.Runtime
	log      *slog.Logger
	bus      *core.Bus     // nil when the bus cannot subscribe
	clog     *core.Storage // nil when the store keeps no crumb log
	runs     *core.Storage // nil when the store keeps no run records
	liveness Liveness      // nil when nothing can tell a lost run
	bufs     bufPool       // frame buffers, reused across responses
	kas      sync.Pool     // *keepAlive, reused across run-starting streams
}

// recordLiveness answers from the store's run records: a run is alive until
// its record is final (completed, failed, cancelled, lost). A run without a
// record (relayed from a remote, or a pipeline's own id) cannot be told.
type recordLiveness struct{ runs core.RunStore }

func (l recordLiveness) Alive(ctx context.Context, runID string) (bool, error) {
	r, err := l.runs.GetRun(ctx, runID)
	if err != nil {
		return false, err
	}
	return !r.Status.Final(), nil
}

// vary marks a response as chosen by the Accept header, for caches.
func vary(w http.ResponseWriter) { w.Header().Add("Vary", "Accept") }

// delegated starts the runs of h at the delegation depth the request
// states (core.DelegationDepthHeader, bounded): another bread server's
// remote-agent client sends it, so agents that delegate to each other
// across servers meet the delegation limit. A resume goes on at its
// checkpoint's depth and needs none.
func delegated(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(core.DelegationDepthHeader) != "" {
			r = r.WithContext(core.DelegationFromHeader(r.Context(), r.Header))
		}
		h.ServeHTTP(w, r)
	})
}
