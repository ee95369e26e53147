package server_test

import (
	"context"
	"iter"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/stream"
	"github.com/breadai/bread/server"
)

// fakeConfig configures a fakeEngine. The fields that mean what
// engine.Config's mean have their names.
type fakeConfig struct {
	Store       core.BreadStore // nil: a memory store
	Agents      []*core.Agent
	Pipelines   map[string][]core.PipelineStep
	Entrypoints []string
	Plugins     []core.BreadPlugin
	BlobStore   core.BlobStore
	Schedules   []core.ScheduleInfo
	// Pieces, when set, are a run's text deltas in place of "hello", each
	// after Pace, and its output their concatenation: a run that streams
	// for a while.
	Pieces []string
	Pace   time.Duration
	// Block, when set, makes every run stop after its first text delta,
	// close Block (once) and wait until its context ends, Cancel reaches
	// it or Stop is called; it then ends RUN_CANCELLED.
	Block chan struct{}
	// CancelQueued and CancelSuspended answer the Engine methods; nil
	// finds nothing.
	CancelQueued    func(ctx context.Context, runID string) (bool, error)
	CancelSuspended func(ctx context.Context, runID string) (bool, error)
}

// fakeEngine is a server.Engine without the engine, for tests of the
// server's own logic: a run is a fixed crumb sequence (start, "hello" or
// Pieces, end) or, with Block, one that waits to be cancelled; background runs are
// NOT_IMPLEMENTED, as the Engine documents for an implementation without
// them.
type fakeEngine struct {
	cfg       fakeConfig
	agents    map[string]*core.Agent
	storage   *core.Storage
	bus       *core.Bus
	blobs     *core.Blobs
	accepting atomic.Bool
	stopped   chan struct{}
	stopOnce  sync.Once
	block     sync.Once
	ids       atomic.Int64

	mu      sync.Mutex
	running map[string]context.CancelFunc
}

var _ server.Engine = (*fakeEngine)(nil)

func newFakeEngine(cfg fakeConfig) *fakeEngine {
	if cfg.Store == nil {
		cfg.Store = memory.New()
	}
	e := &fakeEngine{cfg: cfg, agents: map[string]*core.Agent{}, storage: core.NewStorage(cfg.Store),
		bus: core.NewBus(stream.New(stream.Options{})), blobs: core.NewBlobs(cfg.BlobStore),
		stopped: make(chan struct{}), running: map[string]context.CancelFunc{}}
	for _, a := range cfg.Agents {
		e.agents[a.ID] = a
	}
	e.accepting.Store(true)
	return e
}

// Stop ends the blocked runs and turns Accepting false, as the engine's
// Stop does.
func (e *fakeEngine) Stop(context.Context) error {
	e.accepting.Store(false)
	e.stopOnce.Do(func() { close(e.stopped) })
	return nil
}

// Runs counts the runs started, of agents that exist.
func (e *fakeEngine) Runs() int64 { return e.ids.Load() }

func (e *fakeEngine) Run(ctx context.Context, agentID string, input any, opts core.RunOptions) iter.Seq2[core.Crumb, error] {
	return func(yield func(core.Crumb, error) bool) {
		if _, ok := e.agents[agentID]; !ok {
			err := &core.BreadError{Code: core.CodeAgentNotFound, Message: "agent " + strconv.Quote(agentID) + " not found"}
			yield(&core.AgentError{CrumbBase: core.CrumbBase{AgentID: agentID}, Error: err}, err)
			return
		}
		runID := "run-" + strconv.FormatInt(e.ids.Add(1), 10)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		e.mu.Lock()
		e.running[runID] = cancel
		e.mu.Unlock()
		defer func() {
			e.mu.Lock()
			delete(e.running, runID)
			e.mu.Unlock()
		}()
		base := func(seq int64) core.CrumbBase {
			return core.CrumbBase{AgentID: agentID, RunID: runID, SessionID: opts.Session.ID, Timestamp: core.NowMillis(), Seq: seq}
		}
		if !yield(&core.AgentRunStart{CrumbBase: base(1), Input: input}, nil) {
			return
		}
		pieces := e.cfg.Pieces
		if pieces == nil {
			pieces = []string{"hello"}
		}
		for _, p := range pieces {
			if e.cfg.Pace > 0 {
				select {
				case <-time.After(e.cfg.Pace):
				case <-ctx.Done():
				}
			}
			if !yield(&core.TextDelta{CrumbBase: base(1), Delta: p}, nil) {
				return
			}
		}
		if e.cfg.Block != nil {
			e.block.Do(func() { close(e.cfg.Block) })
			select {
			case <-ctx.Done():
			case <-e.stopped:
			}
			err := &core.BreadError{Code: core.CodeRunCancelled, Message: "the run was cancelled"}
			yield(&core.AgentError{CrumbBase: base(2), Error: err}, err)
			return
		}
		yield(&core.AgentRunEnd{CrumbBase: base(2), Output: strings.Join(pieces, "")}, nil)
	}
}

func (e *fakeEngine) Resume(context.Context, string, any) iter.Seq2[core.Crumb, error] {
	return notFound(&core.BreadError{Code: core.CodeCheckpointNotFound, Message: "no checkpoint here"})
}

func (e *fakeEngine) ResumeWith(ctx context.Context, id string, response any, _ core.ClientInput) iter.Seq2[core.Crumb, error] {
	return e.Resume(ctx, id, response)
}

func (e *fakeEngine) RunPipeline(_ context.Context, id string, _ any) iter.Seq2[core.Crumb, error] {
	return notFound(&core.BreadError{Code: core.CodePipelineNotFound, Message: "the fake runs no pipeline " + strconv.Quote(id)})
}

// notFound is a run refused before it started.
func notFound(err *core.BreadError) iter.Seq2[core.Crumb, error] {
	return func(yield func(core.Crumb, error) bool) { yield(&core.AgentError{Error: err}, err) }
}

func (e *fakeEngine) Cancel(runID string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	cancel, ok := e.running[runID]
	if ok {
		cancel()
	}
	return ok
}

func (e *fakeEngine) On(core.Listener) func()            { return func() {} }
func (e *fakeEngine) Storage() *core.Storage             { return e.storage }
func (e *fakeEngine) Bus() *core.Bus                     { return e.bus }
func (e *fakeEngine) Blobs() *core.Blobs                 { return e.blobs }
func (e *fakeEngine) CrumbFilter() func(core.Crumb) bool { return nil }
func (e *fakeEngine) Logger() *slog.Logger               { return slog.New(slog.DiscardHandler) }
func (e *fakeEngine) Plugins() []core.BreadPlugin        { return slices.Clone(e.cfg.Plugins) }
func (e *fakeEngine) Accepting() bool                    { return e.accepting.Load() }
func (e *fakeEngine) Schedules() []core.ScheduleInfo     { return e.cfg.Schedules }

func (e *fakeEngine) Pipelines() map[string][]core.PipelineStep { return e.cfg.Pipelines }

func (e *fakeEngine) Agent(id string) (*core.Agent, bool) {
	a, ok := e.agents[id]
	return a, ok
}

func (e *fakeEngine) Agents() []*core.Agent {
	return slices.SortedFunc(maps.Values(e.agents), func(a, b *core.Agent) int { return strings.Compare(a.ID, b.ID) })
}

func (e *fakeEngine) Entrypoint(id string) bool {
	return len(e.cfg.Entrypoints) == 0 || slices.Contains(e.cfg.Entrypoints, id)
}

func (e *fakeEngine) RunBackground(context.Context, string, any, core.RunOptions, core.BackgroundOptions) (core.Detached, error) {
	return core.Detached{}, &core.BreadError{Code: core.CodeNotImplemented, Message: "the fake runs nothing in the background"}
}

func (e *fakeEngine) RunPipelineBackground(context.Context, string, any, core.BackgroundOptions) (core.Detached, error) {
	return core.Detached{}, &core.BreadError{Code: core.CodeNotImplemented, Message: "the fake runs nothing in the background"}
}

func (e *fakeEngine) CancelQueued(ctx context.Context, runID string) (bool, error) {
	if e.cfg.CancelQueued == nil {
		return false, nil
	}
	return e.cfg.CancelQueued(ctx, runID)
}

func (e *fakeEngine) CancelSuspended(ctx context.Context, runID string) (bool, error) {
	if e.cfg.CancelSuspended == nil {
		return false, nil
	}
	return e.cfg.CancelSuspended(ctx, runID)
}
