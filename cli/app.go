package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/breadai/bread/cli/project"
	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/protocols/mcpserver"
	"github.com/breadai/bread/providers/replay"
	"github.com/breadai/bread/server"
	"github.com/breadai/bread/transports/httpstream"
)

// app is one CLI invocation: where it reads and writes, and the project it
// works on once loaded.
type app struct {
	opts     Options
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer
	lookup   func(string) (string, bool)
	log      *slog.Logger
	cwd      string
	project  *project.Project
	recorder *replay.Recorder
	// coordinator is the cluster coordinator of a Redis or NATS bus.
	coordinator clusterCoordinator
	// tel is the otel plugin of the loaded project, once built.
	tel *telemetry
	// durableJobs is set once the instance's background runs go through
	// a durable job queue (jobs/river).
	durableJobs bool
	// mcpEndpoints outlive the projects a reload replaces (mcpEndpoint).
	mcpMu        sync.Mutex
	mcpEndpoints map[string]*mcpserver.Endpoint
}

// load reads the project in a.cwd and merges the Go extensions of Options.
func (a *app) load() error {
	p, err := project.Load(a.cwd, project.Options{LookupEnv: a.lookup, OutputFormats: slices.Sorted(maps.Keys(a.opts.OutputFormats))})
	if err != nil {
		return err
	}
	for _, ag := range p.Agents {
		if parse, ok := a.opts.OutputFormats[ag.Output.Format]; ok {
			ag.Output.Parse = parse
		}
		ag.Tools = append(ag.Tools, a.opts.Tools["*"]...)
		ag.Tools = append(ag.Tools, a.opts.Tools[ag.ID]...)
	}
	p.Agents = append(p.Agents, a.opts.Agents...)
	p.Tasks = append(p.Tasks, a.opts.Tasks...)
	a.project = p
	return nil
}

// mode says what an instance is for: serving HTTP uses the configured bus
// and listeners; a terminal command runs on the in-process bus and prints
// for itself.
type mode uint8

const (
	modeServe mode = iota
	modeTerminal
	// modeBuild builds what serving builds (plugins, routes, auth) to check
	// it, on an in-memory store and without the bus or listeners, so
	// `bread build` touches no database, broker or port.
	modeBuild
)

// instance builds the engine.Instance the project describes, and for serving
// the server options. The caller starts and stops it.
func (a *app) instance(ctx context.Context, m mode) (*engine.Instance, *server.Options, error) {
	cfg := a.project.Config
	c := engine.Config{
		Entrypoints: cfg.Entrypoints, Agents: a.project.Agents, Tasks: a.project.Tasks, Pipelines: cfg.Pipelines,
		Hooks: a.opts.Hooks, ErrorHandling: cfg.ErrorHandling, MaxConcurrentRuns: cfg.MaxConcurrentRuns, SessionConcurrency: cfg.SessionConcurrency, RunLease: cfg.RunLease,
		MaxDelegationDepth: cfg.MaxDelegationDepth,
		Logger:             a.log, Decisions: map[string]core.Decider{}, RemoteAgents: map[string]core.RemoteAgent{},
		Webhooks: engine.WebhookOptions{Secret: cfg.Webhooks.Secret, SecretCredential: cfg.Webhooks.SecretCredential, AllowHosts: cfg.Webhooks.AllowHosts, AllowPrivateNetworks: cfg.Webhooks.AllowPrivateNetworks,
			MaxAttempts: cfg.Webhooks.MaxAttempts, Backoff: cfg.Webhooks.Backoff},
	}
	var err error
	if cfg.Store == nil {
		return nil, nil, &project.Error{File: "bread.yaml", Err: &core.BreadError{Code: core.CodeStoreNotConfigured,
			Message: "no store configured: add `store: sqlite` (or memory, postgres) to bread.yaml"}}
	}
	if m == modeBuild {
		if err := a.checkStore(ctx, cfg.Store); err != nil {
			return nil, nil, err
		}
		c.Store = memory.New()
	} else if c.Store, err = a.store(ctx, cfg.Store); err != nil {
		return nil, nil, err
	}
	// One Storage for the engine and for what reads the store before the
	// engine exists (the server's ownership, the stream-token route).
	c.Store = core.NewStorage(a.traceStore(c.Store))
	// A terminal command runs on the in-process bus, but a typo in
	// bread.yaml fails it as it would fail the server.
	w, err := a.wiring()
	if err != nil {
		return nil, nil, err
	}
	if m == modeServe {
		if c.Bus, err = a.bus(ctx, w.bus); err != nil {
			return nil, nil, err
		}
	}
	if err := a.jobs(ctx, &c, m); err != nil {
		return nil, nil, err
	}
	if c.BlobStore, err = a.blobStore(cfg.BlobStore); err != nil {
		return nil, nil, err
	}
	c.BlobStore, c.Plugins = a.serveBlobs(c.BlobStore, c.Plugins, m)
	if c.Credentials, err = a.credentials(cfg.Credentials); err != nil {
		return nil, nil, err
	}
	if c.Providers, err = a.providers(); err != nil {
		return nil, nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Decisions)) {
		if c.Decisions[name], err = a.decider(cfg.Decisions[name], c.Providers); err != nil {
			return nil, nil, err
		}
	}
	maps.Copy(c.Decisions, a.opts.Decisions)
	for _, id := range slices.Sorted(maps.Keys(cfg.RemoteAgents)) {
		if c.RemoteAgents[id], err = a.remoteAgent(cfg.RemoteAgents[id]); err != nil {
			return nil, nil, err
		}
	}
	if a.coordinator != nil {
		c.Plugins = append(c.Plugins, a.coordinator)
	}
	c.Plugins = append(c.Plugins, a.opts.Plugins...)
	for _, pc := range cfg.Plugins {
		f, ok := a.pluginTypes()[pc.Type]
		if !ok {
			return nil, nil, unknown(pc, "plugin", slices.Collect(maps.Keys(a.pluginTypes())))
		}
		p, err := f(ctx, pc, a.project)
		if err != nil {
			return nil, nil, err
		}
		c.Plugins = append(c.Plugins, p)
	}
	c.Providers = a.traceProviders(c.Providers)
	auth, err := a.serverAuth(cfg.Server.Auth, &c)
	if err != nil {
		return nil, nil, err
	}
	inst, err := engine.New(c)
	if err != nil {
		return nil, nil, a.project.Locate(err)
	}
	so := &server.Options{
		Host: cfg.Server.Host, Port: cfg.Server.Port, MaxBodyBytes: cfg.Server.MaxBodyBytes, Logger: a.log,
		CORS:              server.CORS{Origins: cfg.Server.CORSOrigins, MaxAge: cfg.Server.CORSMaxAge},
		AllowCrossOrigin:  cfg.Server.AllowCrossOrigin,
		ReadHeaderTimeout: cfg.Server.Timeouts.ReadHeader, IdleTimeout: cfg.Server.Timeouts.Idle, BodyReadTimeout: cfg.Server.Timeouts.BodyRead,
		MaxConnections: cfg.Server.MaxConnections,
		Streams:        httpstream.Options{Heartbeat: w.heartbeat, Format: streamFormat(w.format), Logger: a.log}, Public: cfg.Server.Public, AccessLog: cfg.Server.AccessLog,
		Console: cfg.Server.Console,
	}
	if a.coordinator != nil {
		so.Canceller = a.coordinator
		so.Streams.Liveness = a.coordinator
	}
	if m == modeServe {
		for _, lc := range w.listeners {
			l, err := a.listener(lc)
			if err != nil {
				return nil, nil, err
			}
			inst.On(l)
		}
	}
	so.Evals = a.evals(inst)
	auth.apply(so)
	return inst, so, nil
}

// The server takes the engine through server.Engine and never imports it;
// the cli, which imports both, holds the promise in its build: renaming an
// engine method the server calls breaks `go build` here (and CI's go vet of
// every module), not a route at run time. It lives here, not in the engine's
// tests, so the engine module does not depend on the server.
var _ server.Engine = (*engine.Instance)(nil)

// newServer builds the server for inst and checks what only the mounted
// routes can tell: that every action an `allow` list names is served.
func (a *app) newServer(inst *engine.Instance, so *server.Options) (*server.Server, error) {
	srv, err := server.New(inst, *so)
	if err != nil {
		return nil, &project.Error{File: "bread.yaml", Err: core.AsBreadError(err, core.CodeInvalidConfig)}
	}
	if err := checkAllow(a.project.Config.Server.Auth, srv.Actions()); err != nil {
		return nil, err
	}
	return srv, nil
}

// checkStore checks the store component without touching the store: a
// built-in store is constructed, which decodes its options strictly and
// opens nothing (database/sql connects on first use), then closed; a
// store registered through Options.Stores is checked by type only, since
// its factory may connect.
func (a *app) checkStore(ctx context.Context, c *project.Component) error {
	if err := a.knownStore(c); err != nil {
		return err
	}
	f, builtin := a.builtinStores()[c.Type]
	if _, custom := a.opts.Stores[c.Type]; !builtin || custom {
		return nil
	}
	st, err := f(ctx, c, a.project)
	if err != nil {
		var located *project.Error
		if errors.As(err, &located) {
			return err
		}
		return &project.Error{File: c.File, Line: c.Line, Err: core.AsBreadError(err, core.CodeInvalidConfig)}
	}
	return core.NewStorage(st).Close()
}

func (a *app) storeFactories() map[string]StoreFactory {
	factories := a.builtinStores()
	maps.Copy(factories, a.opts.Stores)
	return factories
}

// knownStore checks a store type without opening it.
func (a *app) knownStore(c *project.Component) error {
	factories := a.storeFactories()
	if _, ok := factories[c.Type]; !ok {
		return unknown(c, "store", slices.Collect(maps.Keys(factories)))
	}
	return nil
}

func (a *app) store(ctx context.Context, c *project.Component) (core.BreadStore, error) {
	if err := a.knownStore(c); err != nil {
		return nil, err
	}
	s, err := a.storeFactories()[c.Type](ctx, c, a.project)
	if err != nil {
		return nil, located(c, err)
	}
	return s, nil
}

// located puts an adapter's error at its component's line.
func located(c *project.Component, err error) error {
	var pe *project.Error
	if errors.As(err, &pe) {
		return err
	}
	return &project.Error{File: c.File, Line: c.Line, Err: core.AsBreadError(err, core.CodeInvalidConfig)}
}

// started builds and starts an instance.
func (a *app) started(ctx context.Context, m mode) (*engine.Instance, *server.Options, error) {
	inst, so, err := a.instance(ctx, m)
	if err != nil {
		return nil, nil, err
	}
	if err := inst.Start(ctx); err != nil {
		_ = inst.Stop(context.WithoutCancel(ctx))
		return nil, nil, a.project.Locate(err)
	}
	return inst, so, nil
}

// fail prints an error the way every command does and returns exit code 1.
func (a *app) fail(err error) int {
	fmt.Fprintln(a.stderr, "bread:", err)
	return 1
}
