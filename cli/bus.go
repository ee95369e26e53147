package cli

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/breadai/bread/cli/project"
	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/stream"
	"github.com/breadai/bread/transports/httpstream"
	bnats "github.com/breadai/bread/transports/nats"
	"github.com/breadai/bread/transports/redis"
	"github.com/breadai/bread/transports/stdout"
)

// wiring is what bread.yaml says about moving crumbs: the replica bus, the
// streaming routes' heartbeat, and the listeners of a serving instance. It
// merges the bus:, streams: and listeners: sections with the older
// transport: key, which meant all three.
type wiring struct {
	bus       *project.Component // nil: the in-process bus
	heartbeat time.Duration      // 0: the default
	format    string             // "ndjson", "sse", "": NDJSON
	listeners []*project.Component
}

// legacyTransports are the types the older transport: key accepts.
var legacyTransports = []string{"httpchunked", "httpsse", "redis", "stdout"}

// wiring reads and checks the project's bus, streams and listeners without
// opening anything: unknown types, unknown options and a setting made
// twice (once under transport:) are errors at their line.
func (a *app) wiring() (wiring, error) {
	cfg := a.project.Config
	w := wiring{bus: cfg.Bus, heartbeat: cfg.Streams.Heartbeat, format: cfg.Streams.Format, listeners: slices.Clone(cfg.Listeners)}
	if t := cfg.Transport; t != nil {
		if err := a.legacyTransport(t, &w); err != nil {
			return w, err
		}
	}
	if w.bus != nil {
		if err := a.checkBus(w.bus); err != nil {
			return w, err
		}
	}
	for _, l := range w.listeners {
		if _, err := a.listener(l); err != nil {
			return w, err
		}
	}
	return w, nil
}

// legacyTransport maps `transport:` onto the wiring: httpchunked and httpsse
// set the stream format of a request that asks for neither (NDJSON, SSE:
// the seed's wire follows the configured transport; both formats are always
// served to a client that names one), the heartbeat and, with a nested bus,
// the bus; redis is the Redis bus; stdout is a printing listener.
func (a *app) legacyTransport(t *project.Component, w *wiring) error {
	setBus := func(b *project.Component) error {
		if w.bus != nil {
			return t.Errorf(core.CodeInvalidConfig, "the bus is set twice: by bus: and by transport: (the older spelling); keep bus:")
		}
		w.bus = b
		return nil
	}
	switch t.Type {
	case "httpchunked", "httpsse":
		var o struct {
			Heartbeat duration       `json:"heartbeat"`
			Bus       map[string]any `json:"bus"`
		}
		if err := decode(t, &o); err != nil {
			return err
		}
		format := map[string]string{"httpchunked": "ndjson", "httpsse": "sse"}[t.Type]
		if w.format != "" && w.format != format {
			return t.Errorf(core.CodeInvalidConfig, "the stream format is set twice: streams.format is %s, transport: %s streams %s; keep one", w.format, t.Type, format)
		}
		w.format = format
		if o.Heartbeat != 0 {
			if w.heartbeat != 0 {
				return t.Errorf(core.CodeInvalidConfig, "the heartbeat is set twice: by streams.heartbeat and by transport.heartbeat (the older spelling); keep streams:")
			}
			if o.Heartbeat < 0 {
				return t.Errorf(core.CodeInvalidConfig, "transport.heartbeat must be positive")
			}
			w.heartbeat = time.Duration(o.Heartbeat)
		}
		if o.Bus != nil {
			b := &project.Component{Options: maps.Clone(o.Bus), File: t.File, Line: t.Line}
			typ, _ := b.Options["type"].(string)
			delete(b.Options, "type")
			if typ != "redis" {
				return t.Errorf(core.CodeInvalidConfig, "unknown bus %q under transport:; known: redis (or use bus:)", typ)
			}
			b.Type = typ
			return setBus(b)
		}
		return nil
	case "redis":
		return setBus(&project.Component{Type: "redis", Options: t.Options, File: t.File, Line: t.Line})
	case "stdout":
		w.listeners = append(w.listeners, t)
		return nil
	}
	return unknown(t, "transport", slices.Clone(legacyTransports))
}

// busFactories are the bus types bread.yaml may name: the built-in ones and
// Options.Buses.
func (a *app) busFactories() map[string]BusFactory {
	f := map[string]BusFactory{
		"inprocess": func(_ context.Context, c *project.Component, _ *project.Project) (core.BreadBus, error) {
			var o inprocessOptions
			if err := decode(c, &o); err != nil {
				return nil, err
			}
			return stream.New(stream.Options(o)), nil
		},
		"redis": func(_ context.Context, c *project.Component, _ *project.Project) (core.BreadBus, error) {
			var o redisOptions
			if err := decode(c, &o); err != nil {
				return nil, err
			}
			return a.redisBus(o)
		},
		"nats": func(_ context.Context, c *project.Component, _ *project.Project) (core.BreadBus, error) {
			var o natsOptions
			if err := decode(c, &o); err != nil {
				return nil, err
			}
			return a.natsBus(o)
		},
	}
	maps.Copy(f, a.opts.Buses)
	return f
}

// inprocessOptions are the in-process bus's options (core/stream).
type inprocessOptions struct {
	MaxBytesPerRun        int `json:"maxBytesPerRun"`
	MaxFramesPerRun       int `json:"maxFramesPerRun"`
	MaxPendingBytesPerRun int `json:"maxPendingBytesPerRun"`
	MaxRuns               int `json:"maxRuns"`
	MaxSubscriberLag      int `json:"maxSubscriberLag"`
}

// redisOptions are the Redis bus's options.
type redisOptions struct {
	URL       string   `json:"url"`
	KeyPrefix string   `json:"keyPrefix"`
	MaxLen    int64    `json:"maxLen"`
	LeaseTTL  duration `json:"leaseTTL"`
}

// natsOptions are the NATS JetStream bus's options (transports/nats).
type natsOptions struct {
	URL           string   `json:"url"`
	Stream        string   `json:"stream"`
	SubjectPrefix string   `json:"subjectPrefix"`
	Bucket        string   `json:"bucket"`
	MaxAge        duration `json:"maxAge"`
	Memory        bool     `json:"memory"`
	Replicas      int      `json:"replicas"`
	LeaseTTL      duration `json:"leaseTTL"`
}

// streamFormat is the httpstream format a format name of the wiring
// stands for: NDJSON unless it says sse.
func streamFormat(name string) httpstream.Format {
	if name == "sse" {
		return httpstream.SSE{}
	}
	return httpstream.NDJSON{}
}

// checkBus checks a bus type exists and, for the built-in ones, its
// options, without connecting.
func (a *app) checkBus(c *project.Component) error {
	factories := a.busFactories()
	if _, ok := factories[c.Type]; !ok {
		return unknown(c, "bus", slices.Collect(maps.Keys(factories)))
	}
	if _, custom := a.opts.Buses[c.Type]; custom {
		return nil
	}
	switch c.Type {
	case "inprocess":
		return decode(c, &inprocessOptions{})
	case "redis":
		return decode(c, &redisOptions{})
	case "nats":
		return decode(c, &natsOptions{})
	}
	return nil
}

// bus builds the configured bus; nil is the engine's in-process default.
func (a *app) bus(ctx context.Context, c *project.Component) (core.BreadBus, error) {
	if c == nil {
		return nil, nil
	}
	if err := a.checkBus(c); err != nil {
		return nil, err
	}
	b, err := a.busFactories()[c.Type](ctx, c, a.project)
	if err != nil {
		return nil, located(c, err)
	}
	return b, nil
}

// redisBus builds the Redis bus and, on the same Redis, the cluster
// coordinator: run leases, cancels that reach the replica running a run,
// and RUN_LOST for tails of runs whose replica died.
func (a *app) redisBus(o redisOptions) (core.BreadBus, error) {
	if o.URL == "" {
		o.URL = a.getenv("REDIS_URL") // as postgres defaults to $DATABASE_URL
	}
	bus, err := redis.New(redis.Options{URL: o.URL, KeyPrefix: o.KeyPrefix, MaxLen: o.MaxLen, Logger: a.log})
	if err != nil {
		return nil, err
	}
	prefix := "bread:"
	if o.KeyPrefix != "" {
		prefix = o.KeyPrefix
	}
	coord, err := redis.NewCoordinator(redis.CoordinatorOptions{URL: o.URL, KeyPrefix: prefix, LeaseTTL: time.Duration(o.LeaseTTL), Logger: a.log})
	if err != nil {
		_ = bus.Close()
		return nil, err
	}
	a.coordinator = coord
	return bus, nil
}

// natsBus builds the NATS JetStream bus and, on the same NATS, the cluster
// coordinator (its leases in a key-value bucket), as redisBus does.
func (a *app) natsBus(o natsOptions) (core.BreadBus, error) {
	if o.URL == "" {
		o.URL = a.getenv("NATS_URL")
	}
	bus, err := bnats.New(bnats.Options{
		URL: o.URL, Stream: o.Stream, SubjectPrefix: o.SubjectPrefix, MaxAge: time.Duration(o.MaxAge),
		Memory: o.Memory, Replicas: o.Replicas, Logger: a.log,
	})
	if err != nil {
		return nil, err
	}
	coord, err := bnats.NewCoordinator(bnats.CoordinatorOptions{URL: o.URL, Bucket: o.Bucket, LeaseTTL: time.Duration(o.LeaseTTL), Logger: a.log})
	if err != nil {
		_ = bus.Close()
		return nil, err
	}
	a.coordinator = coord
	return bus, nil
}

// clusterCoordinator is what the CLI needs of a bus's coordinator
// (transports/redis's, transports/nats's): a plugin holding run leases,
// a server.Canceller and an httpstream.Liveness.
type clusterCoordinator interface {
	core.BreadPlugin
	Cancel(ctx context.Context, runID string) (bool, error)
	Alive(ctx context.Context, runID string) (bool, error)
}

// listener builds a listener of bread.yaml's listeners: (or transport:
// stdout): stdout prints every crumb on the command's standard output.
func (a *app) listener(c *project.Component) (core.Listener, error) {
	if c.Type != "stdout" {
		return nil, unknown(c, "listener", []string{"stdout"})
	}
	var o struct {
		Verbose   bool `json:"verbose"`
		Reasoning bool `json:"reasoning"`
	}
	if err := decode(c, &o); err != nil {
		return nil, err
	}
	return stdout.New(stdout.Options{Writer: a.stdout, Verbose: o.Verbose, Reasoning: o.Reasoning}).Listen, nil
}
