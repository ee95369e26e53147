package engine_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// laterClock is two hours ahead of the real time and never ticks on its
// own.
type laterClock struct{ at time.Time }

func (c laterClock) Now() time.Time { return c.at }
func (laterClock) NewTimer(time.Duration) engine.Timer {
	return stillTimer{make(chan time.Time)}
}
func (laterClock) NewTicker(time.Duration) engine.Ticker {
	return stillTicker{make(chan time.Time)}
}

type stillTimer struct{ c chan time.Time }

func (t stillTimer) C() <-chan time.Time { return t.c }
func (stillTimer) Stop() bool            { return true }

type stillTicker struct{ c chan time.Time }

func (t stillTicker) C() <-chan time.Time { return t.c }
func (stillTicker) Stop()                 {}

// TestLeasesRunOnTheConfiguredClock: with Config.Clock two hours ahead, the
// first sweep finds a lease that lapses in an hour lapsed, and a running
// run's lease runs from the clock's time.
func TestLeasesRunOnTheConfiguredClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		later := laterClock{at: time.Now().Add(2 * time.Hour)}
		store := memory.New()
		inAnHour := time.Now().Add(time.Hour).UnixMilli()
		sess, err := store.CreateSession(ctx, core.NewSession{})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.PutRun(ctx, core.RunRecord{ID: "elsewhere", AgentID: "a", SessionID: sess.ID, Status: core.RunRunning, Owner: "other", LeaseUntil: inAnHour}); err != nil {
			t.Fatal(err)
		}
		const lease = time.Minute
		reached := make(chan struct{})
		in, err := engine.New(engine.Config{Store: store, Clock: later, RunLease: lease, Agents: []*core.Agent{textAgent("a")},
			Providers: modeltest.New(modeltest.Block(reached)).Registry("mock")})
		if err != nil {
			t.Fatal(err)
		}
		if err := in.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer in.Stop(ctx)
		synctest.Wait() // the keeper's first sweep
		if r := getRun(t, store, "elsewhere"); r.Status != core.RunLost {
			t.Errorf("a lease lapsed on the clock: %+v", r)
		}

		runCtx, cancel := context.WithCancel(ctx)
		ids := make(chan string, 1)
		go func() {
			for c := range in.Run(runCtx, "a", "hi", core.RunOptions{}) {
				if s, ok := c.(*core.AgentRunStart); ok {
					ids <- s.RunID
				}
			}
			close(ids)
		}()
		<-reached
		if r := getRun(t, store, <-ids); r.LeaseUntil != later.at.Add(lease).UnixMilli() {
			t.Errorf("the running run's lease ends at %d, want the clock's time plus the lease, %d", r.LeaseUntil, later.at.Add(lease).UnixMilli())
		}
		cancel()
		for range ids {
		}
	})
}

// sweepOnce is the real time, whose tickers never tick: the lease keeper
// sweeps once, at Start, and never renews. Swept is closed once that sweep
// is over: the keeper asks its tickers for their channels only after it
// (records.keep), and nothing else in the engine uses a ticker. A test
// that lays out a lapsed run after Swept knows no sweep will find it,
// where one racing the sweep at Start saw it end the run first ("crumb
// log already holds seq 1").
type sweepOnce struct {
	Swept chan struct{}
	once  sync.Once
}

func newSweepOnce() *sweepOnce { return &sweepOnce{Swept: make(chan struct{})} }

func (*sweepOnce) Now() time.Time { return time.Now() }
func (*sweepOnce) NewTimer(d time.Duration) engine.Timer {
	return engine.RealClock().NewTimer(d)
}
func (s *sweepOnce) NewTicker(time.Duration) engine.Ticker {
	return sweptTicker{stillTicker{make(chan time.Time)}, s}
}

// sweptTicker is a stillTicker that tells its sweepOnce the keeper is past
// its first sweep.
type sweptTicker struct {
	stillTicker
	s *sweepOnce
}

func (t sweptTicker) C() <-chan time.Time {
	t.s.once.Do(func() { close(t.s.Swept) })
	return t.stillTicker.C()
}
