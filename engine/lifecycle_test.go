package engine_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/blobfs"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/typed"
)

// lifecyclePlugin records Init and Close.
type lifecyclePlugin struct {
	name    string
	log     *tracer
	failing bool
}

// A plugin whose Init has the wrong signature is silently not an Initer;
// these assertions keep the test plugin honest.
var (
	_ core.PluginIniter = (*lifecyclePlugin)(nil)
	_ core.PluginCloser = (*lifecyclePlugin)(nil)
)

func (p *lifecyclePlugin) Name() string { return p.name }
func (p *lifecyclePlugin) Init(ctx context.Context, _ core.Runtime) error {
	p.log.add("init:" + p.name)
	if p.failing {
		return errors.New("cannot init")
	}
	return nil
}
func (p *lifecyclePlugin) Close(context.Context) error { p.log.add("close:" + p.name); return nil }

// migratingStore records Migrate and Close around a memory store.
type migratingStore struct {
	*memory.Store
	log *tracer
}

func (s migratingStore) Migrate(context.Context) error { s.log.add("migrate"); return nil }
func (s migratingStore) Close() error                  { s.log.add("store-close"); return s.Store.Close() }

func TestLifecycleOrder(t *testing.T) {
	tr := &tracer{}
	in, err := engine.New(engine.Config{
		Store:   migratingStore{memory.New(), tr},
		Plugins: []core.BreadPlugin{&lifecyclePlugin{name: "a", log: tr}, &lifecyclePlugin{name: "b", log: tr}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := in.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if tr.String() != "migrate init:a init:b close:b close:a store-close" {
		t.Errorf("lifecycle %q", tr)
	}
}

func TestStartFailureClosesWhatStarted(t *testing.T) {
	tr := &tracer{}
	in, _ := engine.New(engine.Config{
		Store:   memory.New(),
		Plugins: []core.BreadPlugin{&lifecyclePlugin{name: "a", log: tr}, &lifecyclePlugin{name: "b", log: tr, failing: true}, &lifecyclePlugin{name: "c", log: tr}},
	})
	if err := in.Start(context.Background()); err == nil {
		t.Fatal("want an error")
	}
	if tr.String() != "init:a init:b close:a" {
		t.Errorf("lifecycle %q", tr)
	}
}

func TestNewWithoutStore(t *testing.T) {
	_, err := engine.New(engine.Config{})
	wantCode(t, err, core.CodeStoreNotConfigured)
}

// A store keeping only the required parts: no loops, no crumb log.
type requiredOnly struct {
	core.SessionStore
	core.CheckpointStore
}

func TestLoopAgentNeedsALoopStore(t *testing.T) {
	loopAgent := &core.Agent{ID: "looper", Model: core.ModelRef{Provider: "scripted", Model: "m"}, Loop: &core.LoopConfig{Pool: []string{"a"}}}
	store := memory.New()
	_, err := engine.New(engine.Config{Store: requiredOnly{store, store}, Agents: []*core.Agent{textAgent("a"), loopAgent}})
	wantCode(t, err, core.CodeInvalidConfig)
	if _, err := engine.New(engine.Config{Store: requiredOnly{store, store}, Agents: []*core.Agent{textAgent("a")}}); err != nil {
		t.Fatalf("a store without loops serves agents without loops: %v", err)
	}
}

func TestRunBeforeStart(t *testing.T) {
	in, _ := engine.New(engine.Config{Store: memory.New(), Agents: []*core.Agent{textAgent("a")}})
	_, err := collect(in.Run(context.Background(), "a", "x", core.RunOptions{}))
	wantCode(t, err, core.CodeNotStarted)
}

func TestBadPluginName(t *testing.T) {
	in, _ := engine.New(engine.Config{Store: memory.New(), Plugins: []core.BreadPlugin{&lifecyclePlugin{name: "Bad Name", log: &tracer{}}}})
	wantCode(t, in.Start(context.Background()), core.CodeInvalidName)
}

func TestGeneratedFiles(t *testing.T) {
	blobs, err := blobfs.New(blobfs.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	turn := modeltest.File("image/png", []byte("\x89PNG"), "cat.png")
	tb := newTestbed(t, modeltest.New(turn), []*core.Agent{textAgent("a")}, func(c *engine.Config) { c.BlobStore = blobs })
	cs, err := tb.run(t, "a", "draw", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fg := last[*core.FileGenerated](t, cs)
	end := last[*core.AgentRunEnd](t, cs)
	if fg.MimeType != "image/png" || !strings.HasPrefix(fg.URI, "file://") || len(end.Files) != 1 || end.Files[0].URI != fg.URI {
		t.Errorf("file:generated %+v, files %+v", fg, end.Files)
	}

	tb = newTestbed(t, modeltest.New(turn), []*core.Agent{textAgent("a")})
	_, err = tb.run(t, "a", "draw", core.RunOptions{})
	wantCode(t, err, core.CodeBlobStoreNotConfigured)

	tb = newTestbed(t, modeltest.New(modeltest.Text("no files")), []*core.Agent{textAgent("a")})
	if _, err := tb.run(t, "a", "x", core.RunOptions{}); err != nil {
		t.Errorf("no blob store is fine while no file arrives: %v", err)
	}
}

func TestCancellation(t *testing.T) {
	t.Run("context cancelled while the model streams", func(t *testing.T) {
		reached := make(chan struct{})
		tb := newTestbed(t, modeltest.New(modeltest.Block(reached, "partial ")), []*core.Agent{textAgent("a")})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-reached; cancel() }()
		cs, err := collect(tb.in.Run(ctx, "a", "x", core.RunOptions{}))
		wantCode(t, err, core.CodeRunCancelled)
		ae := last[*core.AgentError](t, cs)
		entries, _ := tb.store.GetCrumbs(context.Background(), ae.RunID, 0, 0)
		if len(entries) == 0 || entries[len(entries)-1].Type != core.TypeAgentError {
			t.Errorf("the cancellation is logged: %+v", entries)
		}
	})
	t.Run("Instance.Cancel reaches a tool through its context", func(t *testing.T) {
		toolStarted := make(chan struct{})
		sawCancel := make(chan struct{})
		wait := typed.DefineTool("wait", "", func(ctx context.Context, _ struct{}, _ core.ToolContext) (string, error) {
			close(toolStarted)
			<-ctx.Done()
			close(sawCancel)
			return "", ctx.Err()
		})
		a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{wait}}
		tb := newTestbed(t, modeltest.New(modeltest.ToolCall("tool_wait", struct{}{}), modeltest.Text("never")), []*core.Agent{a})
		var runID string
		go func() {
			<-toolStarted
			if !tb.in.Cancel(runID) {
				t.Error("Cancel did not find the run")
			}
		}()
		var err error
		for c, e := range tb.in.Run(context.Background(), "a", "x", core.RunOptions{}) {
			if s, ok := c.(*core.AgentRunStart); ok {
				runID = s.RunID
			}
			err = e
		}
		wantCode(t, err, core.CodeRunCancelled)
		select {
		case <-sawCancel:
		case <-time.After(5 * time.Second):
			t.Fatal("the tool never saw the cancellation")
		}
		if tb.in.Cancel(runID) {
			t.Error("a finished run is no longer cancellable")
		}
	})
	t.Run("breaking out of the range cancels the run", func(t *testing.T) {
		reached := make(chan struct{})
		tb := newTestbed(t, modeltest.New(modeltest.Block(reached, "a", "b")), []*core.Agent{textAgent("a")})
		var runID string
		for c := range tb.in.Run(context.Background(), "a", "x", core.RunOptions{}) {
			runID = c.Base().RunID
			break
		}
		entries, _ := tb.store.GetCrumbs(context.Background(), runID, 0, 0)
		if len(entries) == 0 || entries[len(entries)-1].Type != core.TypeAgentError {
			t.Fatalf("an abandoned run ends as RUN_CANCELLED in the log: %+v", entries)
		}
		if ae := entries[len(entries)-1].Crumb.(*core.AgentError); ae.Error.Code != core.CodeRunCancelled {
			t.Errorf("code %s", ae.Error.Code)
		}
	})
}

func TestConcurrencyLimit(t *testing.T) {
	reached := make(chan struct{})
	tb := newTestbed(t, modeltest.New(modeltest.Block(reached)), []*core.Agent{textAgent("a")}, func(c *engine.Config) { c.MaxConcurrentRuns = 1 })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		_, _ = collect(tb.in.Run(ctx, "a", "x", core.RunOptions{}))
		close(done)
	}()
	<-reached
	_, err := tb.run(t, "a", "y", core.RunOptions{})
	wantCode(t, err, core.CodeConcurrencyLimit)
	cancel()
	<-done
}

// remote is a RemoteAgent replaying crumbs as another bread would.
type remote struct{ crumbs []core.Crumb }

func (r remote) Run(_ context.Context, agentID string, _ any, _ core.RunOptions) iter.Seq2[core.Crumb, error] {
	return func(yield func(core.Crumb, error) bool) {
		for _, c := range r.crumbs {
			if !yield(c, nil) {
				return
			}
		}
	}
}

func TestRemoteAgentsShadowAndRelay(t *testing.T) {
	b := core.CrumbBase{AgentID: "researcher", RunID: "remote-run", SessionID: "remote-session", Timestamp: 1, Seq: 41}
	r := remote{crumbs: []core.Crumb{
		&core.AgentRunStart{CrumbBase: b, Input: "q"},
		&core.TextDelta{CrumbBase: b, Delta: "from afar"},
		&core.AgentRunEnd{CrumbBase: b, Output: "from afar"},
	}}
	tb := newTestbed(t, modeltest.New(modeltest.Text("local")), []*core.Agent{textAgent("researcher")}, func(c *engine.Config) {
		c.RemoteAgents = map[string]core.RemoteAgent{"researcher": r}
		c.Hooks.BeforeRun = func(context.Context, core.HookContext, any) (*core.BeforeRunResult, error) {
			return nil, errors.New("hooks must not run for a remote agent")
		}
	})
	cs, err := tb.run(t, "researcher", "q", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantTypes(t, cs, core.TypeAgentRunStart, core.TypeTextDelta, core.TypeAgentRunEnd)
	if got := [3]int64{cs[0].Base().Seq, cs[1].Base().Seq, cs[2].Base().Seq}; got != [3]int64{1, 1, 2} {
		t.Errorf("relayed crumbs take local seqs: %v", got)
	}
	if tb.model.Calls() != 0 {
		t.Errorf("the local agent must be shadowed")
	}
	if entries, _ := tb.store.GetCrumbs(context.Background(), "remote-run", 0, 0); len(entries) != 0 {
		t.Errorf("relayed crumbs are never logged: %d entries", len(entries))
	}

	broken := remote{crumbs: []core.Crumb{&core.AgentRunStart{CrumbBase: b}}}
	tb = newTestbed(t, modeltest.New(), nil, func(c *engine.Config) { c.RemoteAgents = map[string]core.RemoteAgent{"x": broken} })
	_, err = tb.run(t, "x", "q", core.RunOptions{})
	wantCode(t, err, core.CodeRemoteAgentError)
}

// leaser records leases held by runs.
type leaser struct {
	mu   sync.Mutex
	held map[string]int
	log  []string
}

func (l *leaser) Name() string { return "cluster" }
func (l *leaser) HoldLease(_ context.Context, runID string) func() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held[runID]++
	l.log = append(l.log, "hold")
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.held[runID]--
		l.log = append(l.log, "release")
	}
}

func TestRunsHoldALeaseWhileRunning(t *testing.T) {
	l := &leaser{held: map[string]int{}}
	reached := make(chan struct{})
	tb := newTestbed(t, modeltest.New(modeltest.Block(reached)), []*core.Agent{textAgent("a")}, func(c *engine.Config) { c.Plugins = []core.BreadPlugin{l} })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _, _ = collect(tb.in.Run(ctx, "a", "x", core.RunOptions{})); close(done) }()
	<-reached
	l.mu.Lock()
	holding := len(l.held) == 1
	l.mu.Unlock()
	if !holding {
		t.Fatal("a running run holds a lease")
	}
	cancel()
	<-done
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, n := range l.held {
		if n != 0 {
			t.Errorf("lease of %s still held %d times", id, n)
		}
	}
	if strings.Join(l.log, ",") != "hold,release" {
		t.Errorf("log %v", l.log)
	}
}
