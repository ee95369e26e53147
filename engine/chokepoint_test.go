package engine

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breadai/bread/core"
)

// fakeLog is a crumb log that records writes and fails on demand: the choke
// point's failure handling cannot be exercised with a healthy store. Only
// the CrumbLog methods are implemented; the embedded nil BreadStore makes
// any other call fail the test loudly.
type fakeLog struct {
	core.BreadStore
	mu      sync.Mutex
	entries []core.CrumbLogEntry
	seeds   map[string]int64
	failRun string // AppendCrumbs fails for this run
	calls   int
	inline  bool // reported by AppendsInline
}

func (f *fakeLog) AppendsInline() bool { return f.inline }

// logModes are the two ways the choke point writes its log: through its
// writer goroutine, and on the stream's goroutine for an inline log.
var logModes = []struct {
	name   string
	inline bool
}{{"writer goroutine", false}, {"inline", true}}

func (f *fakeLog) AppendCrumbs(_ context.Context, es []core.CrumbLogEntry) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	for _, e := range es {
		if e.RunID == f.failRun {
			return errors.New("disk full")
		}
	}
	f.entries = append(f.entries, es...)
	return nil
}

func (f *fakeLog) GetCrumbs(context.Context, string, int64, int) ([]core.CrumbLogEntry, error) {
	return nil, nil
}

func (f *fakeLog) MaxCrumbSeq(_ context.Context, runID string) (int64, error) {
	return f.seeds[runID], nil
}

func (f *fakeLog) logged() []core.CrumbLogEntry {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.entries)
}

// recordingTransport records published frames and can fail.
type recordingTransport struct {
	mu     sync.Mutex
	frames []core.Frame
	fail   bool
}

func (r *recordingTransport) Capability() core.Capability { return core.Sink }
func (r *recordingTransport) Publish(_ context.Context, f core.Frame) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail {
		return errors.New("broker down")
	}
	r.frames = append(r.frames, f)
	return nil
}

type cpHarness struct {
	in   *Instance
	log  *fakeLog
	tr   *recordingTransport
	warn *bytes.Buffer
	cp   *chokePoint
}

func newCPHarness(t *testing.T, store core.BreadStore, mutate func(*Config)) *cpHarness {
	t.Helper()
	h := &cpHarness{tr: &recordingTransport{}, warn: &bytes.Buffer{}}
	if fl, ok := store.(*fakeLog); ok {
		h.log = fl
	}
	cfg := Config{Store: store, Bus: h.tr, Logger: slog.New(slog.NewTextHandler(h.warn, nil))}
	if mutate != nil {
		mutate(&cfg)
	}
	in, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.in = in
	h.cp = in.newChokePoint(context.Background())
	return h
}

func (h *cpHarness) send(cs ...core.Crumb) {
	for _, c := range cs {
		h.cp.process(context.Background(), c)
	}
}

func b(run string) core.CrumbBase {
	return core.CrumbBase{AgentID: "a", RunID: run, SessionID: "s", Timestamp: 1}
}

func seqs(cs []core.Crumb) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = c.Base().Seq
	}
	return out
}

func entrySummary(es []core.CrumbLogEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		s := e.Type + "#" + itoa(e.Seq)
		if d, ok := e.Crumb.(*core.TextDelta); ok {
			s += "=" + d.Delta
		}
		if d, ok := e.Crumb.(*core.ReasoningDelta); ok {
			s += "=" + d.Delta
		}
		out[i] = s
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestChokePointNumbering(t *testing.T) {
	tests := []struct {
		name     string
		crumbs   []core.Crumb
		seeds    map[string]int64
		relayed  []string // run ids marked as relayed before the crumbs pass
		wantSeqs []int64
		wantLog  []string
	}{
		{
			name: "durable crumbs count up and are logged",
			crumbs: []core.Crumb{
				&core.AgentRunStart{CrumbBase: b("r")},
				&core.ToolCall{CrumbBase: b("r")},
				&core.AgentRunEnd{CrumbBase: b("r")},
			},
			wantSeqs: []int64{1, 2, 3},
			wantLog:  []string{"agent:run:start#1", "tool:call#2", "agent:run:end#3"},
		},
		{
			name: "deltas carry the watermark and flush as one entry at the next boundary",
			crumbs: []core.Crumb{
				&core.AgentRunStart{CrumbBase: b("r")},
				&core.TextDelta{CrumbBase: b("r"), Delta: "Bread "},
				&core.TextDelta{CrumbBase: b("r"), Delta: "is good"},
				&core.AgentRunEnd{CrumbBase: b("r")},
			},
			wantSeqs: []int64{1, 1, 1, 3},
			wantLog:  []string{"agent:run:start#1", "text:delta#2=Bread is good", "agent:run:end#3"},
		},
		{
			name: "a delta of the other type closes the window: the log keeps the live order",
			crumbs: []core.Crumb{
				&core.AgentRunStart{CrumbBase: b("r")},
				&core.ReasoningDelta{CrumbBase: b("r"), Delta: "hmm"},
				&core.ReasoningDelta{CrumbBase: b("r"), Delta: "?"},
				&core.TextDelta{CrumbBase: b("r"), Delta: "yes"},
				&core.ReasoningDelta{CrumbBase: b("r"), Delta: "!"},
				&core.AgentRunEnd{CrumbBase: b("r")},
			},
			wantSeqs: []int64{1, 1, 1, 2, 3, 5},
			wantLog:  []string{"agent:run:start#1", "reasoning:delta#2=hmm?", "text:delta#3=yes", "reasoning:delta#4=!", "agent:run:end#5"},
		},
		{
			name: "pipeline steps are numbered but not logged",
			crumbs: []core.Crumb{
				&core.PipelineStepStart{CrumbBase: core.CrumbBase{AgentID: "a", RunID: "p"}},
				&core.PipelineStepEnd{CrumbBase: core.CrumbBase{AgentID: "a", RunID: "p"}},
			},
			wantSeqs: []int64{1, 2},
			wantLog:  []string{},
		},
		{
			name:     "relayed crumbs are numbered but not logged",
			relayed:  []string{"x"},
			crumbs:   []core.Crumb{&core.AgentRunStart{CrumbBase: core.CrumbBase{AgentID: "remote", RunID: "x"}}},
			wantSeqs: []int64{1},
			wantLog:  []string{},
		},
		{
			name:     "a resumed run continues the logged numbering",
			seeds:    map[string]int64{"r": 7},
			crumbs:   []core.Crumb{&core.HumanResumed{CrumbBase: b("r")}, &core.TextDelta{CrumbBase: b("r"), Delta: "ok"}},
			wantSeqs: []int64{8, 8},
			wantLog:  []string{"human:resumed#8", "text:delta#9=ok"},
		},
		{
			name: "interleaved runs keep their own counters",
			crumbs: []core.Crumb{
				&core.AgentRunStart{CrumbBase: b("a")},
				&core.AgentRunStart{CrumbBase: b("b")},
				&core.AgentRunEnd{CrumbBase: b("a")},
			},
			wantSeqs: []int64{1, 1, 2},
			wantLog:  []string{"agent:run:start#1", "agent:run:start#1", "agent:run:end#2"},
		},
		{
			name:     "crumbs without a run are passed through unnumbered",
			crumbs:   []core.Crumb{&core.AgentError{CrumbBase: core.CrumbBase{AgentID: "ghost"}, Error: &core.BreadError{Code: core.CodeAgentNotFound}}},
			wantSeqs: []int64{0},
			wantLog:  []string{},
		},
	}
	for _, mode := range logModes {
		for _, tt := range tests {
			t.Run(mode.name+"/"+tt.name, func(t *testing.T) {
				testNumbering(t, mode.inline, tt.crumbs, tt.seeds, tt.relayed, tt.wantSeqs, tt.wantLog)
			})
		}
	}
}

func testNumbering(t *testing.T, inline bool, crumbs []core.Crumb, seeds map[string]int64, relayed []string, wantSeqs []int64, wantLog []string) {
	for _, c := range crumbs {
		c.Base().Seq = 0 // the table's crumbs are numbered once per mode
	}
	h := newCPHarness(t, &fakeLog{seeds: seeds, inline: inline}, nil)
	for _, id := range relayed {
		h.cp.in.relayed.Store(id, struct{}{})
	}
	h.send(crumbs...)
	h.cp.finish()
	for _, id := range relayed {
		if _, still := h.cp.in.relayed.Load(id); still {
			t.Errorf("relay mark of %s outlived the stream", id)
		}
	}
	if got := seqs(crumbs); !slices.Equal(got, wantSeqs) {
		t.Errorf("seqs %v, want %v", got, wantSeqs)
	}
	if got := entrySummary(h.log.logged()); !slices.Equal(got, wantLog) {
		t.Errorf("log %q, want %q", got, wantLog)
	}
}

// An inline log has each entry as soon as its crumb is processed, before
// the stream ends, and starts no writer goroutine.
func TestChokePointWritesAnInlineLogAtOnce(t *testing.T) {
	fl := &fakeLog{inline: true}
	h := newCPHarness(t, fl, nil)
	h.send(&core.AgentRunStart{CrumbBase: b("r")}, &core.TextDelta{CrumbBase: b("r"), Delta: "hi"}, &core.ToolCall{CrumbBase: b("r")})
	if got, want := entrySummary(fl.logged()), []string{"agent:run:start#1", "text:delta#2=hi", "tool:call#3"}; !slices.Equal(got, want) {
		t.Errorf("log before the stream ends %q, want %q", got, want)
	}
	if h.cp.signal != nil {
		t.Error("an inline log started the writer goroutine")
	}
	h.cp.finish()
}

func TestChokePointDeltaWindowFlushesAtSize(t *testing.T) {
	h := newCPHarness(t, &fakeLog{}, func(c *Config) { c.CrumbLog.MaxBufferBytes = 4 })
	cs := []core.Crumb{
		&core.AgentRunStart{CrumbBase: b("r")},
		&core.TextDelta{CrumbBase: b("r"), Delta: "ab"},
		&core.TextDelta{CrumbBase: b("r"), Delta: "cd"}, // reaches 4 bytes: flushed as #2
		&core.TextDelta{CrumbBase: b("r"), Delta: "e"},  // watermark is now 2
	}
	h.send(cs...)
	h.cp.finish()
	if got, want := seqs(cs), []int64{1, 1, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("seqs %v, want %v", got, want)
	}
	if got, want := entrySummary(h.log.logged()), []string{"agent:run:start#1", "text:delta#2=abcd", "text:delta#3=e"}; !slices.Equal(got, want) {
		t.Errorf("log %q, want %q", got, want)
	}
}

func TestChokePointDeltaWindowFlushesAtAge(t *testing.T) {
	synctest.Test(t, testDeltaWindowFlushesAtAge)
}

func testDeltaWindowFlushesAtAge(t *testing.T) {
	const age = 10 * time.Millisecond
	h := newCPHarness(t, &fakeLog{}, func(c *Config) { c.CrumbLog.MaxBufferAge = age })
	h.send(&core.AgentRunStart{CrumbBase: b("r")}, &core.TextDelta{CrumbBase: b("r"), Delta: "slow"})
	time.Sleep(age) // fake time: the window ages
	synctest.Wait()
	if len(h.log.logged()) < 2 {
		t.Fatal("the aged delta window was not flushed")
	}
	late := &core.TextDelta{CrumbBase: b("r"), Delta: "er"}
	h.send(late)
	if late.Seq != 2 {
		t.Errorf("a delta after an aged flush carries watermark %d, want 2", late.Seq)
	}
	h.cp.finish()
	if got, want := entrySummary(h.log.logged()), []string{"agent:run:start#1", "text:delta#2=slow", "text:delta#3=er"}; !slices.Equal(got, want) {
		t.Errorf("log %q, want %q", got, want)
	}
}

func TestChokePointFailedWriteDisablesLoggingForThatRunOnly(t *testing.T) {
	for _, mode := range logModes {
		t.Run(mode.name, func(t *testing.T) { testFailedWrite(t, mode.inline) })
	}
}

func testFailedWrite(t *testing.T, inline bool) {
	fl := &fakeLog{failRun: "bad", inline: inline}
	h := newCPHarness(t, fl, nil)
	first := []core.Crumb{&core.AgentRunStart{CrumbBase: b("bad")}, &core.AgentRunStart{CrumbBase: b("good")}}
	h.send(first...)
	h.cp.drain() // the write of "bad" fails here and disables its logging
	later := []core.Crumb{&core.ToolCall{CrumbBase: b("bad")}, &core.ToolCall{CrumbBase: b("bad")}, &core.AgentRunEnd{CrumbBase: b("good")}}
	h.send(later...)
	h.cp.finish()

	if got, want := seqs(append(first, later...)), []int64{1, 1, 2, 3, 2}; !slices.Equal(got, want) {
		t.Errorf("numbering must go on after a failed write: %v, want %v", got, want)
	}
	if got, want := entrySummary(fl.logged()), []string{"agent:run:start#1", "agent:run:end#2"}; !slices.Equal(got, want) {
		t.Errorf("log %q, want only the good run %q", got, want)
	}
	if n := strings.Count(h.warn.String(), "crumb log disabled"); n != 1 {
		t.Errorf("want one warning, got %d:\n%s", n, h.warn)
	}
	if fl.calls != 3 {
		t.Errorf("the failed run kept writing: %d AppendCrumbs calls, want 3 (bad, good, good)", fl.calls)
	}
}

func TestChokePointWithoutCrumbLog(t *testing.T) {
	type plainStore struct{ core.BreadStore }
	h := newCPHarness(t, plainStore{}, nil)
	cs := []core.Crumb{&core.AgentRunStart{CrumbBase: b("r")}, &core.TextDelta{CrumbBase: b("r"), Delta: "x"}, &core.AgentRunEnd{CrumbBase: b("r")}}
	h.send(cs...)
	h.cp.finish()
	// No log: deltas never open windows, so no seq is spent on aggregates.
	if got, want := seqs(cs), []int64{1, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("seqs %v, want %v", got, want)
	}
}

func TestChokePointListenersAndPublish(t *testing.T) {
	var seen []string
	h := newCPHarness(t, &fakeLog{}, func(c *Config) {
		c.CrumbFilter = func(c core.Crumb) bool { return c.CrumbType() != core.TypeReasoningDelta }
	})
	remove := h.in.On(func(_ context.Context, c core.Crumb) { seen = append(seen, "first:"+c.CrumbType()) })
	h.in.On(func(context.Context, core.Crumb) { panic("listener bug") })
	h.in.On(func(_ context.Context, c core.Crumb) { seen = append(seen, "third:"+c.CrumbType()) })

	h.send(&core.AgentRunStart{CrumbBase: b("r")}, &core.ReasoningDelta{CrumbBase: b("r"), Delta: "x"})
	remove()
	h.send(&core.AgentRunEnd{CrumbBase: b("r")})
	h.cp.finish()

	want := []string{"first:agent:run:start", "third:agent:run:start", "first:reasoning:delta", "third:reasoning:delta", "third:agent:run:end"}
	if !slices.Equal(seen, want) {
		t.Errorf("listeners saw %q, want %q", seen, want)
	}
	if !strings.Contains(h.warn.String(), "listener panicked") {
		t.Errorf("a panicking listener must be logged")
	}
	var published []string
	for _, f := range h.tr.frames {
		published = append(published, f.Crumb.CrumbType()+"#"+itoa(f.Seq))
	}
	if want := []string{"agent:run:start#1", "agent:run:end#3"}; !slices.Equal(published, want) {
		t.Errorf("published %q, want %q (the filter drops reasoning)", published, want)
	}
	if got := entrySummary(h.log.logged()); !slices.Contains(got, "reasoning:delta#2=x") {
		t.Errorf("the crumb filter must not affect the log: %q", got)
	}
}

func TestChokePointPublishFailureWarnsOnceAndGoesOn(t *testing.T) {
	h := newCPHarness(t, &fakeLog{}, nil)
	h.tr.fail = true
	cs := []core.Crumb{&core.AgentRunStart{CrumbBase: b("r")}, &core.ToolCall{CrumbBase: b("r")}, &core.AgentRunEnd{CrumbBase: b("r")}}
	h.send(cs...)
	h.cp.finish()
	if n := strings.Count(h.warn.String(), "publish failed"); n != 1 {
		t.Errorf("want exactly one publish warning, got %d", n)
	}
	if len(h.log.logged()) != 3 {
		t.Errorf("a failed publish must not affect the log")
	}
}

// The invariant a lossless reconnect rests on: the deltas that carry
// watermark w are exactly, in order, the text of the aggregated entry w+1,
// however text, reasoning, other crumbs and size-triggered flushes mix.
func TestChokePointWindowCoversItsWatermark(t *testing.T) {
	for _, mode := range logModes {
		t.Run(mode.name, func(t *testing.T) {
			fl := &fakeLog{inline: mode.inline}
			h := newCPHarness(t, fl, func(c *Config) { c.CrumbLog.MaxBufferBytes = 7 })
			rng := rand.New(rand.NewPCG(1, 2))
			var live []core.Crumb
			h.send(&core.AgentRunStart{CrumbBase: b("r")})
			for i := range 2000 {
				var c core.Crumb
				switch n := rng.IntN(10); {
				case n < 5:
					c = &core.TextDelta{CrumbBase: b("r"), Delta: strconv.Itoa(i)}
				case n < 9:
					c = &core.ReasoningDelta{CrumbBase: b("r"), Delta: strconv.Itoa(i)}
				default:
					c = &core.ToolCall{CrumbBase: b("r")}
				}
				h.send(c)
				live = append(live, c)
			}
			h.cp.finish()
			byWatermark := map[int64]string{}
			var types = map[int64]string{}
			for _, c := range live {
				if d, ok := c.(*core.TextDelta); ok {
					byWatermark[d.Seq] += d.Delta
					types[d.Seq] += "t"
				}
				if d, ok := c.(*core.ReasoningDelta); ok {
					byWatermark[d.Seq] += d.Delta
					types[d.Seq] += "r"
				}
			}
			aggregates := 0
			for _, e := range fl.logged() {
				var text string
				switch d := e.Crumb.(type) {
				case *core.TextDelta:
					text = d.Delta
				case *core.ReasoningDelta:
					text = d.Delta
				default:
					continue
				}
				aggregates++
				if want := byWatermark[e.Seq-1]; text != want {
					t.Fatalf("entry %d holds %q; the deltas at watermark %d were %q", e.Seq, text, e.Seq-1, want)
				}
				if ts := types[e.Seq-1]; strings.Contains(ts, "t") && strings.Contains(ts, "r") {
					t.Fatalf("watermark %d mixes text and reasoning: %s", e.Seq-1, ts)
				}
				delete(byWatermark, e.Seq-1)
			}
			if aggregates < 100 || len(byWatermark) != 0 {
				t.Fatalf("%d aggregates; watermarks with no entry: %v", aggregates, byWatermark)
			}
		})
	}
}

// Every frame carries the run's retention floor: 1 until the log commits
// anything, then the highest committed seq, never ahead of the store.
func TestChokePointPublishesTheDurableFloor(t *testing.T) {
	gate := make(chan struct{})
	fl := &gatedLog{fakeLog: fakeLog{}, gate: gate}
	h := newCPHarness(t, fl, nil)
	floors := func() (out []int64) {
		h.tr.mu.Lock()
		defer h.tr.mu.Unlock()
		for _, f := range h.tr.frames {
			out = append(out, f.Durable)
		}
		return out
	}
	h.send(&core.AgentRunStart{CrumbBase: b("r")}, &core.TextDelta{CrumbBase: b("r"), Delta: "a"}, &core.ToolCall{CrumbBase: b("r")})
	// The writer is stuck on its first write: nothing is committed.
	if got, want := floors(), []int64{1, 1, 1}; !slices.Equal(got, want) {
		t.Fatalf("floors before any commit %v, want %v", got, want)
	}
	close(gate)
	h.cp.sync()
	h.send(&core.TextDelta{CrumbBase: b("r"), Delta: "b"})
	if got := floors(); got[3] != 3 {
		t.Fatalf("floor after the log committed through seq 3: %v", got)
	}
	h.cp.finish()

	// Without a log, and for a run whose logging failed, there is no floor.
	for _, store := range []core.BreadStore{struct{ core.BreadStore }{}, &fakeLog{failRun: "r", inline: true}} {
		h := newCPHarness(t, store, nil)
		h.send(&core.AgentRunStart{CrumbBase: b("r")}, &core.TextDelta{CrumbBase: b("r"), Delta: "a"})
		h.cp.finish()
		for _, f := range h.tr.frames {
			if f.Durable != 0 {
				t.Errorf("%T: a frame of an unlogged run carries floor %d", store, f.Durable)
			}
		}
	}
}

// gatedLog holds every write until gate is closed.
type gatedLog struct {
	fakeLog
	gate chan struct{}
}

func (g *gatedLog) AppendCrumbs(ctx context.Context, es []core.CrumbLogEntry) error {
	<-g.gate
	return g.fakeLog.AppendCrumbs(ctx, es)
}
