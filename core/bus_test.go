package core_test

import (
	"context"
	"errors"
	"iter"
	"sync/atomic"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/stream"
)

// subscribeOnly is a duplex bus that can subscribe but not watch: the
// in-process bus with its Watch hidden.
type subscribeOnly struct{ t *stream.Transport }

func (s subscribeOnly) Capability() core.Capability                     { return core.Duplex }
func (s subscribeOnly) Publish(ctx context.Context, f core.Frame) error { return s.t.Publish(ctx, f) }
func (s subscribeOnly) Subscribe(ctx context.Context, run string, after int64) iter.Seq2[core.Frame, error] {
	return s.t.Subscribe(ctx, run, after)
}

// sinkBus only receives frames.
type sinkBus struct{ closes atomic.Int64 }

func (*sinkBus) Capability() core.Capability               { return core.Sink }
func (*sinkBus) Publish(context.Context, core.Frame) error { return nil }
func (b *sinkBus) Close() error                            { b.closes.Add(1); return errors.New("closed once") }
func (*sinkBus) Subscribe(context.Context, string, int64) iter.Seq2[core.Frame, error] {
	panic("a sink bus is never subscribed to")
}

// wrappedBus keeps the capabilities of the bus it wraps through As.
type wrappedBus struct{ core.BreadBus }

func (w wrappedBus) As(target any) bool { return core.As(w.BreadBus, target) }

func frame(run string, seq int64) core.Frame {
	return core.Frame{RunID: run, Seq: seq, Crumb: &core.TextDelta{CrumbBase: core.CrumbBase{RunID: run, Seq: seq}, Delta: "x"}}
}

// takeAll waits on w until it holds n frames or fails.
func takeAll(t *testing.T, w core.Watch, n int) ([]core.Frame, error) {
	t.Helper()
	var got []core.Frame
	for {
		var err error
		got, err = w.Take(got)
		if err != nil || len(got) >= n {
			return got, err
		}
		select {
		case <-w.Ready():
		case <-t.Context().Done():
			t.Fatal("the watch never got its frames")
		}
	}
}

func TestBusCapabilities(t *testing.T) {
	for _, c := range []struct {
		name string
		bus  core.BreadBus
		want core.BusCapability
	}{
		{"in-process", stream.New(stream.Options{}), core.BusSubscribe | core.BusWatch},
		{"wrapped in-process", wrappedBus{stream.New(stream.Options{})}, core.BusSubscribe | core.BusWatch},
		{"subscriber only", subscribeOnly{stream.New(stream.Options{})}, core.BusSubscribe},
		// A sink that happens to have Subscribe does not subscribe.
		{"sink", &sinkBus{}, core.BusClose},
	} {
		if got := core.NewBus(c.bus).Capabilities(); got != c.want {
			t.Errorf("%s: Capabilities() = %v, want %v", c.name, got, c.want)
		}
	}
	if n := len(core.BusCapabilities()); n != 5 {
		t.Errorf("BusCapabilities() has %d, want 5", n)
	}
}

// TestBusWatchWithoutAWatcher: a bus that only subscribes is watched
// through a goroutine the Watch owns, with the frames published before and
// after the watch began.
func TestBusWatchWithoutAWatcher(t *testing.T) {
	b := core.NewBus(subscribeOnly{stream.New(stream.Options{})})
	ctx := t.Context()
	if err := b.Publish(ctx, frame("r", 1)); err != nil {
		t.Fatal(err)
	}
	w := b.Watch(ctx, "r", 0)
	if err := b.Publish(ctx, frame("r", 2)); err != nil {
		t.Fatal(err)
	}
	got, err := takeAll(t, w, 2)
	if err != nil || len(got) != 2 || got[0].Seq != 1 || got[1].Seq != 2 {
		t.Errorf("took %v, %v; want seq 1 and 2", got, err)
	}
	w.Close() // returns once its goroutine has
	if _, err := w.Take(nil); err == nil {
		t.Error("Take after Close: no error")
	}
}

// TestBusWatchEndsWithTheSubscription: a subscription that ends without
// an error (its context ended) is ErrSubscriptionEnded.
func TestBusWatchEndsWithTheSubscription(t *testing.T) {
	b := core.NewBus(subscribeOnly{stream.New(stream.Options{})})
	ctx, cancel := context.WithCancel(t.Context())
	w := b.Watch(ctx, "r", 0)
	defer w.Close()
	cancel()
	if _, err := takeAll(t, w, 1); !errors.Is(err, core.ErrSubscriptionEnded) {
		t.Errorf("Take after the subscription ended = %v, want ErrSubscriptionEnded", err)
	}
}

func TestBusWithoutSubscriber(t *testing.T) {
	sink := &sinkBus{}
	b := core.NewBus(sink)
	for _, err := range b.Subscribe(t.Context(), "r", 0) {
		if !errors.Is(err, core.ErrNotImplemented) {
			t.Errorf("Subscribe on a sink yielded %v, want NOT_IMPLEMENTED", err)
		}
	}
	w := b.Watch(t.Context(), "r", 0)
	<-w.Ready()
	if _, err := w.Take(nil); !errors.Is(err, core.ErrNotImplemented) {
		t.Errorf("Watch on a sink: Take = %v, want NOT_IMPLEMENTED", err)
	}
	w.Close()
	if err := b.Ping(t.Context()); err != nil {
		t.Errorf("Ping without a Pinger = %v", err)
	}
	if err := b.Start(t.Context()); err != nil {
		t.Errorf("Start without a Starter = %v", err)
	}
	first := b.Close()
	if again := b.Close(); again != first || sink.closes.Load() != 1 {
		t.Errorf("Close twice: %v then %v, the bus closed %d times", first, again, sink.closes.Load())
	}
	if err := b.Publish(t.Context(), frame("r", 1)); !errors.Is(err, core.ErrBusClosed) {
		t.Errorf("Publish after Close = %v, want BUS_CLOSED", err)
	}
	for _, err := range b.Subscribe(t.Context(), "r", 0) {
		if !errors.Is(err, core.ErrBusClosed) {
			t.Errorf("Subscribe after Close yielded %v, want BUS_CLOSED", err)
		}
	}
	for _, err := range []error{b.Ping(t.Context()), b.Start(t.Context())} {
		if !errors.Is(err, core.ErrBusClosed) {
			t.Errorf("after Close: %v, want BUS_CLOSED", err)
		}
	}
}

func TestNewBusOfABusIsItself(t *testing.T) {
	b := core.NewBus(stream.New(stream.Options{}))
	if core.NewBus(b) != b || core.NewBus(nil) != nil {
		t.Error("NewBus of a *Bus built another, or of nil is not nil")
	}
	var in *stream.Transport
	if !b.As(&in) || in == nil {
		t.Error("Bus.As did not reach the in-process bus")
	}
}

// flood is a duplex bus whose every subscription yields frames as fast as
// it is ranged, until the range stops, then reports that it did.
type flood struct{ stopped chan int }

func (flood) Capability() core.Capability               { return core.Duplex }
func (flood) Publish(context.Context, core.Frame) error { return nil }
func (f flood) Subscribe(ctx context.Context, run string, _ int64) iter.Seq2[core.Frame, error] {
	return func(yield func(core.Frame, error) bool) {
		n := 0
		for yield(frame(run, int64(n+1)), nil) {
			n++
		}
		f.stopped <- n
	}
}

// TestBusWatchOverflow: an owner that takes nothing while the run
// publishes past the bound gets the queued frames, then an error, so it
// catches up from the store.
func TestBusWatchOverflow(t *testing.T) {
	f := flood{stopped: make(chan int, 1)}
	w := core.NewBus(f).Watch(t.Context(), "r", 0)
	defer w.Close()
	<-f.stopped // the watch stopped ranging: it is full
	const bound = 10000
	got, err := w.Take(nil)
	if err == nil || errors.Is(err, core.ErrSubscriptionEnded) || len(got) != bound {
		t.Errorf("took %d frames and %v; want %d and an overflow error", len(got), err, bound)
	}
}
