package transporttest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

// Features names what a transport claims.
type Features struct {
	// Replay: Subscribe replays retained frames with seq > afterSeq before
	// live ones. Every duplex transport of this project does; the suite uses
	// replay to know a subscription is established.
	Replay bool
	// Retained is how many frames per run the transport promises to retain
	// for replay (0: assume at least 100).
	Retained int
	// Durable: the transport keeps every frame at or above the run's
	// Frame.Durable floor for replay, however many (the suite publishes
	// 20 times Retained of them). Every duplex transport of this project
	// does: it is what makes a reconnect at any moment lossless.
	Durable bool
	// StalledSubscriberFrames is how many frames the suite publishes past a
	// subscriber that stops reading, to prove Publish does not block
	// (0: 20000).
	StalledSubscriberFrames int
	// Timeout bounds each wait for a frame (0: 10s).
	Timeout time.Duration
}

// Harness returns a fresh, started transport for one test. Cleanup (closing
// it) is the harness's job, through t.Cleanup.
type Harness func(t *testing.T) core.BreadBus

// Run runs every case against transports made by newTransport.
func Run(t *testing.T, f Features, newTransport Harness) {
	if f.Retained <= 0 {
		f.Retained = 100
	}
	if f.StalledSubscriberFrames <= 0 {
		f.StalledSubscriberFrames = 20000
	}
	if f.Timeout <= 0 {
		f.Timeout = 10 * time.Second
	}
	s := &suite{f: f, newTransport: newTransport}

	t.Run("PublishNeverFailsOnAQuietRun", s.publishWithoutSubscribers)
	probe := newTransport(t)
	if probe.Capability() != core.Duplex {
		t.Logf("transporttest: %T is a sink; subscription cases skipped", probe)
		return
	}
	if _, ok := probe.(core.Subscriber); !ok {
		t.Fatalf("transporttest: %T claims Duplex but does not implement core.Subscriber", probe)
	}
	cases := []struct {
		name string
		fn   func(*testing.T)
	}{
		{"DeliversToSubscriberOfTheRun", s.delivers},
		{"PreservesOrderPerRun", s.order},
		{"FansOutToEverySubscriber", s.fanOut},
		{"IsolatesRuns", s.isolation},
		{"StoppingTheRangeUnsubscribes", s.unsubscribe},
		{"CancelledContextEndsTheSubscription", s.cancelEnds},
		{"StalledSubscriberNeverBlocksPublisher", s.stalled},
		{"AfterSeqAtTipSkipsCoveredFrames", s.afterTip},
		{"AfterSeqZeroReplaysRetainedThenLive", s.replayAll},
		{"AfterSeqReplaysOnlyLaterFrames", s.replayAfter},
		{"DeltasSharingAWatermarkAllArrive", s.watermarks},
		{"EveryCrumbTypeSurvives", s.everyType},
		{"ConcurrentPublishersOnManyRuns", s.concurrent},
		{"KeepsEveryFrameAtOrAboveTheDurableFloor", s.durableFloor},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !f.Replay {
				t.Skip("transporttest: needs Features.Replay to know when a subscription is live")
			}
			c.fn(t)
		})
	}
}

type suite struct {
	f            Features
	newTransport Harness
}

func (s *suite) publishWithoutSubscribers(t *testing.T) {
	tr := s.newTransport(t)
	for i := int64(1); i <= 10; i++ {
		if err := tr.Publish(context.Background(), frame(runID(t, "quiet"), i)); err != nil {
			t.Fatalf("Publish with no subscriber: %v", err)
		}
	}
}

func (s *suite) delivers(t *testing.T) {
	tr := s.newTransport(t)
	run := runID(t, "r")
	sub := s.subscribe(t, tr, run, 0)
	s.publish(t, tr, run, 2, 3)
	sub.expectSeqs(t, 1, 2, 3)
}

func (s *suite) order(t *testing.T) {
	tr := s.newTransport(t)
	run := runID(t, "r")
	sub := s.subscribe(t, tr, run, 0)
	const n = 500
	s.publish(t, tr, run, 2, n)
	want := make([]int64, n)
	for i := range want {
		want[i] = int64(i + 1)
	}
	sub.expectSeqs(t, want...)
}

func (s *suite) fanOut(t *testing.T) {
	tr := s.newTransport(t)
	run := runID(t, "r")
	a := s.subscribe(t, tr, run, 0)
	b := s.subscribe(t, tr, run, 1) // already past the probe frame
	s.publish(t, tr, run, 2, 4)
	a.expectSeqs(t, 1, 2, 3, 4)
	b.expectSeqs(t, 2, 3, 4)
}

func (s *suite) isolation(t *testing.T) {
	tr := s.newTransport(t)
	runA, runB := runID(t, "a"), runID(t, "b")
	a := s.subscribe(t, tr, runA, 0)
	s.publish(t, tr, runB, 1, 5)
	s.publish(t, tr, runA, 2, 2)
	a.expectSeqs(t, 1, 2)
	a.expectQuiet(t, 100*time.Millisecond)
	for _, f := range a.got() {
		if f.RunID != runA {
			t.Fatalf("subscriber of %s got a frame of %s", runA, f.RunID)
		}
	}
}

func (s *suite) unsubscribe(t *testing.T) {
	tr := s.newTransport(t)
	run := runID(t, "r")
	sub := s.subscribe(t, tr, run, 0)
	sub.stopAfter(1) // the range stops after the probe frame
	sub.waitDone(t, s.f.Timeout)
	s.publish(t, tr, run, 2, 3)
	if n := len(sub.got()); n != 1 {
		t.Fatalf("a stopped subscription received %d frames, want 1", n)
	}
}

func (s *suite) cancelEnds(t *testing.T) {
	tr := s.newTransport(t)
	run := runID(t, "r")
	sub := s.subscribe(t, tr, run, 0)
	sub.cancel()
	sub.waitDone(t, s.f.Timeout)
}

func (s *suite) stalled(t *testing.T) {
	tr := s.newTransport(t)
	run := runID(t, "r")
	stuck := s.subscribe(t, tr, run, 0)
	stuck.stall() // stop reading after the probe frame, but keep the range open
	healthy := s.subscribe(t, tr, run, 1)

	done := make(chan error, 1)
	go func() {
		for i := int64(2); i <= int64(s.f.StalledSubscriberFrames)+1; i++ {
			if err := tr.Publish(context.Background(), frame(run, i)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Publish failed beside a stalled subscriber: %v", err)
		}
	case <-time.After(s.f.Timeout * 3):
		t.Fatalf("Publish blocked behind a subscriber that stopped reading")
	}
	healthy.waitCount(t, s.f.StalledSubscriberFrames)
	stuck.cancel()
}

func (s *suite) afterTip(t *testing.T) {
	tr := s.newTransport(t)
	run := runID(t, "r")
	s.publish(t, tr, run, 1, 5)
	sub := s.subscribeNoProbe(t, tr, run, 5)
	s.publish(t, tr, run, 6, 6)
	sub.expectSeqs(t, 6)
}

func (s *suite) replayAll(t *testing.T) {
	tr := s.newTransport(t)
	run := runID(t, "r")
	s.publish(t, tr, run, 1, 5)
	sub := s.subscribeNoProbe(t, tr, run, 0)
	sub.waitCount(t, 5)
	s.publish(t, tr, run, 6, 7)
	sub.expectSeqs(t, 1, 2, 3, 4, 5, 6, 7)
}

func (s *suite) replayAfter(t *testing.T) {
	tr := s.newTransport(t)
	run := runID(t, "r")
	s.publish(t, tr, run, 1, 10)
	sub := s.subscribeNoProbe(t, tr, run, 7)
	sub.expectSeqs(t, 8, 9, 10)
}

func (s *suite) watermarks(t *testing.T) {
	tr := s.newTransport(t)
	run := runID(t, "r")
	sub := s.subscribe(t, tr, run, 0)
	for i := range 3 {
		f := core.Frame{RunID: run, Seq: 1, Crumb: &core.TextDelta{CrumbBase: base(run, 1), Delta: fmt.Sprint(i)}}
		if err := tr.Publish(context.Background(), f); err != nil {
			t.Fatal(err)
		}
	}
	s.publish(t, tr, run, 2, 2)
	sub.expectSeqs(t, 1, 1, 1, 1, 2)
}

func (s *suite) everyType(t *testing.T) {
	tr := s.newTransport(t)
	run := runID(t, "r")
	sub := s.subscribe(t, tr, run, 0)
	crumbs := EveryCrumb(run)
	for i, c := range crumbs {
		c.Base().Seq = int64(i + 2)
		if err := tr.Publish(context.Background(), core.Frame{RunID: run, Seq: int64(i + 2), Crumb: c}); err != nil {
			t.Fatal(err)
		}
	}
	sub.waitCount(t, len(crumbs)+1)
	got := sub.got()[1:]
	for i, c := range crumbs {
		want, _ := json.Marshal(c)
		have, err := json.Marshal(got[i].Crumb)
		if err != nil {
			t.Fatalf("%s: re-encode: %v", c.CrumbType(), err)
		}
		if !jsonEqual(want, have) {
			t.Errorf("%s changed in transit:\n sent %s\n got  %s", c.CrumbType(), want, have)
		}
		if got[i].Crumb.CrumbType() != c.CrumbType() {
			t.Errorf("frame %d: type %s, want %s", i, got[i].Crumb.CrumbType(), c.CrumbType())
		}
	}
}

func (s *suite) concurrent(t *testing.T) {
	tr := s.newTransport(t)
	const runs, per = 8, 200
	subs := make([]*subscription, runs)
	ids := make([]string, runs)
	for i := range runs {
		ids[i] = runID(t, fmt.Sprint("c", i))
		subs[i] = s.subscribe(t, tr, ids[i], 0)
	}
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			for seq := int64(2); seq <= per+1; seq++ {
				if err := tr.Publish(context.Background(), frame(ids[i], seq)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for i := range runs {
		subs[i].waitCount(t, per+1)
		for j, f := range subs[i].got() {
			if f.Seq != int64(j+1) {
				t.Fatalf("run %d: frame %d has seq %d", i, j, f.Seq)
			}
		}
	}
}

// durableFloor publishes a long window of deltas that the log does not hold
// yet (their seq is the floor), far past the transport's own bound, then
// raises the floor: a subscriber from before the window gets every delta
// at or above the floor, in order.
func (s *suite) durableFloor(t *testing.T) {
	if !s.f.Durable {
		t.Skip("transporttest: the transport does not claim Features.Durable")
	}
	tr := s.newTransport(t)
	run := runID(t, "r")
	n := 20 * s.f.Retained
	pub := func(f core.Frame) {
		t.Helper()
		if err := tr.Publish(context.Background(), f); err != nil {
			t.Fatal(err)
		}
	}
	first := frame(run, 1)
	first.Durable = 1
	pub(first)
	window := func(seq int64, from int) {
		for i := range n {
			pub(core.Frame{RunID: run, Seq: seq, Durable: seq, Crumb: &core.TextDelta{CrumbBase: base(run, seq), Delta: fmt.Sprint(from+i, " ")}})
		}
	}
	check := func(after, seq int64, from int) {
		t.Helper()
		sub := s.subscribeNoProbe(t, tr, run, after)
		sub.waitCount(t, n+1)
		got := sub.got()
		if got[0].Seq != seq {
			t.Fatalf("the replay after seq %d starts at seq %d", after, got[0].Seq)
		}
		for i, f := range got[1 : n+1] {
			d, ok := f.Crumb.(*core.TextDelta)
			if !ok || f.Seq != seq || d.Delta != fmt.Sprint(from+i, " ") {
				t.Fatalf("delta %d of the window at the floor: seq %d, %#v", i, f.Seq, f.Crumb)
			}
		}
		sub.cancel()
	}
	window(1, 0)
	check(0, 1, 0)
	// The window's log entry took seq 2 and is committed: the floor moves
	// past the window, and the frames below it may go.
	next := frame(run, 3)
	next.Durable = 3
	pub(next)
	window(3, n)
	check(2, 3, n)
}

// publish publishes text:delta-free durable frames first..last.
func (s *suite) publish(t *testing.T, tr core.BreadBus, run string, first, last int64) {
	t.Helper()
	for i := first; i <= last; i++ {
		if err := tr.Publish(context.Background(), frame(run, i)); err != nil {
			t.Fatalf("Publish %s #%d: %v", run, i, err)
		}
	}
}

// subscribe publishes a probe frame (seq afterSeq+1 when afterSeq is 0) and
// subscribes from afterSeq, returning once the subscription has delivered a
// frame, which proves it is live. With afterSeq > 0 the probe must already
// have been published by an earlier subscribe.
func (s *suite) subscribe(t *testing.T, tr core.BreadBus, run string, afterSeq int64) *subscription {
	t.Helper()
	if afterSeq == 0 {
		s.publish(t, tr, run, 1, 1)
		sub := s.subscribeNoProbe(t, tr, run, 0)
		sub.waitCount(t, 1)
		return sub
	}
	return s.subscribeNoProbe(t, tr, run, afterSeq)
}

func (s *suite) subscribeNoProbe(t *testing.T, tr core.BreadBus, run string, afterSeq int64) *subscription {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sub := &subscription{timeout: s.f.Timeout, cancel: cancel, done: make(chan struct{}), stop: -1, changed: make(chan struct{}, 1)}
	t.Cleanup(func() {
		cancel()
		select {
		case <-sub.done:
		case <-time.After(s.f.Timeout):
			t.Errorf("transporttest: a subscription did not end after its context was cancelled")
		}
	})
	go sub.consume(ctx, tr.(core.Subscriber), run, afterSeq)
	if afterSeq > 0 {
		// No frame proves liveness here; a short settle lets transports that
		// subscribe asynchronously attach before the case publishes.
		sub.waitAttached(ctx, tr, run)
	}
	return sub
}
