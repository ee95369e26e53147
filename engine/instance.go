package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/stream"
	"github.com/breadai/bread/engine/schedule"
)

// Instance runs agents. It is the public surface every ingress (the HTTP
// server, MCP, the CLI, your own code) uses: Start and Stop, Run, RunSync,
// Cancel, On, and read access to the store, bus and registries.
//
// Every crumb of every public stream passes one per-run choke point that
// numbers it, appends it to the crumb log, calls the listeners and publishes
// it on the bus.
type Instance struct {
	cfg   Config
	log   *slog.Logger
	clock Clock // Config.Clock, or the real clock
	// The ports, each behind its portable type, built once by New: every
	// optional capability is found there, never asserted here.
	store   *core.Storage
	bus     *core.Bus
	blobs   *core.Blobs // nil: no blob store
	jobs    *core.Queue // Config.Jobs; nil: background runs on goroutines
	records *records    // run lifecycles, when the store keeps them
	agents  map[string]*agentRT
	tasks   map[string]*taskRT

	// Collected from plugins at Start.
	pluginHooks   []core.Hooks
	pluginTools   []pluginTool
	toolResolvers []pluginResolver
	leasers       []core.RunLeaser

	listenersMu sync.Mutex // serialises On and its remove
	listeners   atomic.Pointer[[]*listenerEntry]

	runsMu sync.Mutex
	runs   map[string]context.CancelCauseFunc

	// schemas keeps the tools' compiled schemas across runs.
	schemas schemaCache

	// sessions lets one top-level run at a time hold a session.
	sessions *sessionGate

	// bg owns the goroutines of background runs and their webhooks.
	bg *background
	// timetable is Config.Schedules checked at Start, whose ticks the
	// queue fires; nil before Start.
	timetable *schedule.Timetable
	// queue hands this Instance background-run jobs and schedule ticks:
	// jobs, or an in-process queue for schedules when it is nil; nil when
	// there is neither.
	queue *core.Queue

	// relayed holds the run ids of remote runs whose crumbs are being
	// relayed: the choke point numbers them but never logs them, and
	// forgets the mark when the stream that relayed them finishes.
	relayed sync.Map
	// quietEnds holds the ids of runs of this instance whose end the
	// choke point neither logs nor publishes: another instance ended them
	// while they ran (declared lost: its sweeper logged and published
	// their RUN_LOST), or a stop handed them back to the job queue (their
	// tails wait for the retry). The mark is forgotten when their stream
	// finishes.
	quietEnds sync.Map
	// fences holds the core.RunFence token of each run this instance
	// executes (run id to token), from its bind to its end: the choke
	// point logs the run's crumbs under it.
	fences sync.Map

	inFlight atomic.Int64

	// lifeMu guards accepting, the Start fields below and the Add side of
	// active, so Stop's Wait never races a run being admitted.
	lifeMu    sync.Mutex
	accepting bool           // Start finished and Stop has not begun
	stopped   atomic.Bool    // Stop has begun
	active    sync.WaitGroup // public streams in flight
	stopOnce  sync.Once
	// started: Start was called (once). starting: it has not returned;
	// startDone closes when it returns, cancelStart cancels it (Stop).
	started, starting bool
	startDone         chan struct{}
	cancelStart       context.CancelCauseFunc
	// stopHanded: Stop's context ended while Start was still running, so
	// Start tears the Instance down when it returns.
	stopHanded bool
	// pluginsUp counts the plugins, in order, that Start has opened and
	// nothing has closed since; Start and teardown alone touch it, ordered
	// by lifeMu and startDone.
	pluginsUp int
}

type listenerEntry struct{ fn core.Listener }

// Instance is the Runtime every port sees.
var _ core.Runtime = (*Instance)(nil)

// New validates cfg and returns an Instance ready to Start. A nil Store is
// STORE_NOT_CONFIGURED; a duplicate or badly named agent is INVALID_NAME.
func New(cfg Config) (*Instance, error) {
	if cfg.Store == nil {
		return nil, &core.BreadError{
			Code: core.CodeStoreNotConfigured,
			Message: "no store configured: set Config.Store, for example stores/sqlite, " +
				"stores/postgres (reads DATABASE_URL) or core/memory",
		}
	}
	if cfg.MaxDelegationDepth < 0 {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "MaxDelegationDepth " + strconv.Itoa(cfg.MaxDelegationDepth) + " is negative (0 is the default, " + strconv.Itoa(DefaultMaxDelegationDepth) + ")",
			Context: map[string]any{"field": "MaxDelegationDepth"}}
	}
	bus := cfg.Bus
	if bus == nil {
		bus = stream.New(stream.Options{})
	}
	in := &Instance{
		cfg:      cfg,
		log:      cfg.Logger,
		store:    core.NewStorage(cfg.Store),
		bus:      core.NewBus(bus),
		blobs:    core.NewBlobs(cfg.BlobStore),
		jobs:     core.NewQueue(cfg.Jobs),
		agents:   make(map[string]*agentRT, len(cfg.Agents)),
		tasks:    make(map[string]*taskRT, len(cfg.Tasks)),
		runs:     map[string]context.CancelCauseFunc{},
		sessions: newSessionGate(),
		bg:       newBackground(newWebhooks(cfg)),
	}
	in.clock = cfg.Clock
	if in.clock == nil {
		in.clock = realClock{}
	}
	in.records = newRecords(in, in.newID())
	if in.log == nil {
		in.log = slog.Default()
	}
	for _, t := range cfg.Tasks {
		rt, err := compileTask(t)
		if err != nil {
			return nil, err
		}
		if _, dup := in.tasks[t.Name]; dup {
			return nil, core.Errorf(core.CodeInvalidName, "task %q is defined twice", t.Name)
		}
		in.tasks[t.Name] = rt
	}
	for _, a := range cfg.Agents {
		if err := in.addAgent(a); err != nil {
			return nil, err
		}
	}
	return in, nil
}

func (in *Instance) addAgent(a *core.Agent) error {
	rt, err := compileAgent(a)
	if err != nil {
		return err
	}
	if a.Loop != nil && !in.store.Has(core.StoreLoops) {
		return &core.BreadError{
			Code:    core.CodeInvalidConfig,
			Message: "agent " + a.ID + " runs loops, but the store does not record them (it is not a core.LoopStore)",
			Context: map[string]any{"agentId": a.ID, "field": agentField(a.ID, "Loop")},
		}
	}
	if err := in.sessionPolicy(rt); err != nil {
		return err
	}
	if _, dup := in.agents[a.ID]; dup {
		return core.Errorf(core.CodeInvalidName, "agent %q is defined twice", a.ID)
	}
	for _, id := range a.Tasks {
		if _, ok := in.tasks[id]; !ok {
			return taskNotFound(in, id, a.ID)
		}
	}
	if err := in.checkSelectorTargets(a); err != nil {
		return err
	}
	in.agents[a.ID] = rt
	return nil
}

// ErrStopped matches (errors.Is) the error of Start on an Instance that Stop
// has stopped, or stopped while it started: an Instance runs once; build a
// new one with New.
var ErrStopped = &core.BreadError{Code: core.CodeInstanceStopped}

// Start prepares the Instance: it starts and migrates the store, starts the bus,
// initialises plugins in order and merges what they contribute, then starts
// remote agents. If a step fails, the plugins it opened are closed again.
//
// An Instance starts once. Start after Stop is ErrStopped and touches
// nothing. Stop during Start cancels Start's context and waits for Start to
// return before it tears down what Start brought up; Start then answers
// ErrStopped (its Cause is the step's own error, if one failed) and the
// Instance never admits a run. Stop cancels ctx, the context Start hands
// the ports and plugins, in either case.
func (in *Instance) Start(ctx context.Context) error {
	in.lifeMu.Lock()
	if in.stopped.Load() {
		in.lifeMu.Unlock()
		return &core.BreadError{Code: core.CodeInstanceStopped, Message: "the bread instance was stopped: an Instance runs once; build a new one with engine.New"}
	}
	if in.started {
		in.lifeMu.Unlock()
		return errors.New("bread: Instance already started")
	}
	// Stop cancels this context, whether Start is still running or not:
	// a port's work meant to outlive Start keeps context.WithoutCancel(ctx).
	ctx, cancel := context.WithCancelCause(ctx)
	in.started, in.starting = true, true
	in.startDone, in.cancelStart = make(chan struct{}), cancel
	in.lifeMu.Unlock()

	err := in.start(ctx)

	in.lifeMu.Lock()
	in.starting = false
	close(in.startDone)
	teardown := in.stopHanded
	if in.stopped.Load() {
		err = &core.BreadError{Code: core.CodeInstanceStopped, Message: "the bread instance was stopped while it started", Cause: err}
	} else if err == nil {
		// Only now, with every plugin wired, are runs admitted.
		in.accepting = true
	}
	in.lifeMu.Unlock()
	if teardown {
		// Stop gave up waiting for this Start; what it brought up goes
		// down here, with the context Start was given.
		if terr := errors.Join(in.teardown(context.WithoutCancel(ctx))...); terr != nil {
			in.log.Warn("bread: tearing down after a Stop during Start failed", "error", terr)
		}
	}
	return err
}

// start runs Start's steps in order.
func (in *Instance) start(ctx context.Context) error {
	if err := in.store.Start(ctx); err != nil {
		return fmt.Errorf("bread: start store: %w", err)
	}
	if err := in.store.Migrate(ctx); err != nil {
		return fmt.Errorf("bread: migrate store: %w", err)
	}
	if err := in.bus.Start(ctx); err != nil {
		return fmt.Errorf("bread: start bus: %w", err)
	}
	for i, p := range in.cfg.Plugins {
		if err := core.ValidateName("plugin", p.Name()); err != nil {
			in.closePlugins(ctx, i)
			return err
		}
		if ap, ok := p.(core.AgentsProvider); ok {
			for _, a := range ap.Agents() {
				if err := in.addAgent(a); err != nil {
					in.closePlugins(ctx, i)
					return err
				}
			}
		}
		if err := in.collectPlugin(p); err != nil {
			in.closePlugins(ctx, i)
			return err
		}
		if pi, ok := p.(core.PluginIniter); ok {
			if err := pi.Init(ctx, in); err != nil {
				in.closePlugins(ctx, i)
				return fmt.Errorf("bread: init plugin %s: %w", p.Name(), err)
			}
		}
		in.pluginsUp = i + 1
	}
	in.warnUnsupportedFeatures()
	for id, ra := range in.cfg.RemoteAgents {
		if s, ok := ra.(core.Starter); ok {
			if err := s.Start(ctx); err != nil {
				in.closePlugins(ctx, len(in.cfg.Plugins))
				return fmt.Errorf("bread: start remote agent %s: %w", id, err)
			}
		}
	}
	if err := in.checkReferences(); err != nil {
		in.closePlugins(ctx, len(in.cfg.Plugins))
		return err
	}
	if err := in.checkSchedules(); err != nil {
		in.closePlugins(ctx, len(in.cfg.Plugins))
		return err
	}
	in.records.start()
	if err := in.startJobs(ctx); err != nil {
		in.records.close()
		in.closePlugins(ctx, len(in.cfg.Plugins))
		return err
	}
	return nil
}

// warnUnsupportedFeatures logs agents that ask for knowledge or documents
// on a store without them: their tools are simply absent.
func (in *Instance) warnUnsupportedFeatures() {
	kg, docs := in.store.Has(core.StoreKnowledge), in.store.Has(core.StoreDocuments)
	for _, a := range in.agents {
		if a.Knowledge != nil && !kg {
			in.log.Warn("bread: agent wants knowledge but the store is not a KnowledgeStore; core_kg_* tools are off", "agentId", a.ID)
		}
		if a.Documents != nil && !docs {
			in.log.Warn("bread: agent wants documents but the store is not a DocumentStore; core_doc_* tools are off", "agentId", a.ID)
		}
	}
}

// closePlugins closes, in reverse order, those of the first n plugins that
// Start opened and nothing has closed since.
func (in *Instance) closePlugins(ctx context.Context, n int) []error {
	n = min(n, in.pluginsUp)
	in.pluginsUp = 0
	var errs []error
	for _, p := range slices.Backward(in.cfg.Plugins[:n]) {
		if pc, ok := p.(core.PluginCloser); ok {
			if err := pc.Close(ctx); err != nil {
				errs = append(errs, fmt.Errorf("bread: close plugin %s: %w", p.Name(), err))
			}
		}
	}
	return errs
}

// Stop stops admitting runs (new ones fail with INSTANCE_STOPPING),
// cancels the running ones and waits, until ctx ends, for each to end with
// its durable terminal crumb; then it closes remote agents, plugins (in
// reverse order), the bus and the store. It returns every error it met,
// including ctx's when runs were still winding down at its deadline.
//
// Stop during Start cancels Start and waits for it to return, then tears
// down what it brought up. Should ctx end first, Stop returns ctx's error
// and Start tears the Instance down as it returns. Only the first Stop
// acts; Start after Stop is ErrStopped.
func (in *Instance) Stop(ctx context.Context) error {
	var errs []error
	in.stopOnce.Do(func() {
		in.lifeMu.Lock()
		in.accepting = false
		in.stopped.Store(true)
		starting, done := in.starting, in.startDone
		if in.cancelStart != nil {
			in.cancelStart(ErrStopped)
		}
		in.lifeMu.Unlock()
		if starting {
			select {
			case <-done:
			case <-ctx.Done():
				in.lifeMu.Lock()
				handed := in.starting
				in.stopHanded = handed
				in.lifeMu.Unlock()
				if handed {
					errs = append(errs, fmt.Errorf("bread: Start still running when Stop's context ended; it tears the instance down as it returns: %w", ctx.Err()))
					return
				}
			}
		}
		errs = in.teardown(ctx)
	})
	return errors.Join(errs...)
}

// teardown is Stop's work once no Start runs: cancel and drain the runs,
// then close everything Start opened.
func (in *Instance) teardown(ctx context.Context) []error {
	var errs []error
	in.runsMu.Lock()
	for _, cancel := range in.runs {
		cancel(ErrInstanceStopped)
	}
	in.runsMu.Unlock()
	if err := in.stopJobs(ctx); err != nil {
		errs = append(errs, err)
	}
	drained := make(chan struct{})
	go func() {
		in.active.Wait()
		close(drained)
	}()
	select {
	case <-drained:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("bread: runs still ending when Stop's context ended: %w", ctx.Err()))
	}
	if err := in.bg.stop(ctx); err != nil {
		errs = append(errs, err)
	}
	in.records.close()
	for id, ra := range in.cfg.RemoteAgents {
		if c, ok := ra.(io.Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("bread: close remote agent %s: %w", id, err))
			}
		}
	}
	errs = append(errs, in.closePlugins(ctx, len(in.cfg.Plugins))...)
	if err := in.bus.Close(); err != nil {
		errs = append(errs, fmt.Errorf("bread: close bus: %w", err))
	}
	if err := in.blobs.Close(); err != nil {
		errs = append(errs, fmt.Errorf("bread: close blob store: %w", err))
	}
	if err := in.store.Close(); err != nil {
		errs = append(errs, fmt.Errorf("bread: close store: %w", err))
	}
	return errs
}

// Accepting reports whether the Instance admits runs: Start has finished
// (the store is migrated, the bus started) and Stop has not begun. A
// readiness probe asks it.
func (in *Instance) Accepting() bool {
	in.lifeMu.Lock()
	defer in.lifeMu.Unlock()
	return in.accepting
}

// ErrInstanceStopped is the cause of runs cancelled by Stop.
var ErrInstanceStopped = &core.BreadError{Code: core.CodeRunCancelled, Message: "the instance stopped"}

// stoppedByInstance reports whether err is, or wraps, ErrInstanceStopped
// itself. Not errors.Is: a BreadError matches any error of its code, and a
// user's Cancel, a newer run's interrupt or a consumer gone are
// RUN_CANCELLED too; taking those for a stop would give a cancelled
// resume's checkpoint back to be resumed again (issue 31).
func stoppedByInstance(err error) bool {
	for err != nil {
		if be, ok := err.(*core.BreadError); ok && be == ErrInstanceStopped {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if stoppedByInstance(e) {
					return true
				}
			}
			return false
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return false
		}
	}
	return false
}

// On registers a listener for every crumb and returns a function that
// removes it.
func (in *Instance) On(l core.Listener) (remove func()) {
	e := &listenerEntry{fn: l}
	in.listenersMu.Lock()
	defer in.listenersMu.Unlock()
	var next []*listenerEntry
	if cur := in.listeners.Load(); cur != nil {
		next = slices.Clone(*cur)
	}
	next = append(next, e)
	in.listeners.Store(&next)
	return func() {
		in.listenersMu.Lock()
		defer in.listenersMu.Unlock()
		cur := in.listeners.Load()
		if cur == nil {
			return
		}
		next := slices.DeleteFunc(slices.Clone(*cur), func(x *listenerEntry) bool { return x == e })
		in.listeners.Store(&next)
	}
}

// Storage returns the configured store behind its portable type.
func (in *Instance) Storage() *core.Storage { return in.store }

// Bus returns the configured bus (or the embedded in-process one) behind
// its portable type.
func (in *Instance) Bus() *core.Bus { return in.bus }

// Blobs returns the configured blob store behind its portable type; nil
// (which answers BLOB_STORE_NOT_CONFIGURED) when there is none.
func (in *Instance) Blobs() *core.Blobs { return in.blobs }

// Credentials returns the default credential provider, or nil.
func (in *Instance) Credentials() core.CredentialProvider { return in.cfg.Credentials }

// Providers returns the global model registry (Config.Providers): what a
// plugin resolves an agent's model against, after the agent's own
// (core.ResolveModel(a.Model, a.Providers, in.Providers())), as the MCP
// client does to answer a server's sampling with the agent's model.
func (in *Instance) Providers() core.ProviderRegistry { return in.cfg.Providers }

// CrumbFilter returns Config.CrumbFilter, or nil. Ingresses that replay from
// the store apply it themselves.
func (in *Instance) CrumbFilter() func(core.Crumb) bool { return in.cfg.CrumbFilter }

// Logger returns the Instance's logger.
func (in *Instance) Logger() *slog.Logger { return in.log }

// Agent returns an agent by id.
func (in *Instance) Agent(id string) (*core.Agent, bool) {
	a, ok := in.agents[id]
	if !ok {
		return nil, false
	}
	return a.Agent, true
}

// Agents returns every agent, sorted by id.
func (in *Instance) Agents() []*core.Agent {
	out := make([]*core.Agent, 0, len(in.agents))
	for _, a := range in.agents {
		out = append(out, a.Agent)
	}
	slices.SortFunc(out, func(a, b *core.Agent) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Plugins returns the configured plugins in Config.Plugins order. The server
// reads it to apply plugin middleware and routes.
func (in *Instance) Plugins() []core.BreadPlugin { return slices.Clone(in.cfg.Plugins) }

// Entrypoint implements core.Runtime.
func (in *Instance) Entrypoint(agentID string) bool {
	return len(in.cfg.Entrypoints) == 0 || slices.Contains(in.cfg.Entrypoints, agentID)
}

// Pipelines returns the configured pipelines.
func (in *Instance) Pipelines() map[string][]core.PipelineStep { return in.cfg.Pipelines }
