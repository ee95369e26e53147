package enginetest_test

import (
	"context"
	"iter"
	"net/http"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	corestream "github.com/breadai/bread/core/stream"
)

// failingBus is the in-process bus whose subscriptions fail at once with
// err while fail says so (given the subscription's number, from 1), as a
// bus that keeps dropping a reader (Redis's SUBSCRIBER_LAGGED) or a bus
// that is down would. subscribed is signalled at every Subscribe.
type failingBus struct {
	tr   *corestream.Transport // not embedded: its Watch would bypass Subscribe
	err  error
	fail func(n int) bool

	mu         sync.Mutex
	n          int
	subscribed chan int
}

func (b *failingBus) Subscribe(ctx context.Context, runID string, after int64) iter.Seq2[core.Frame, error] {
	b.mu.Lock()
	b.n++
	n := b.n
	b.mu.Unlock()
	select {
	case b.subscribed <- n:
	default:
	}
	if b.fail(n) {
		return func(yield func(core.Frame, error) bool) { yield(core.Frame{}, b.err) }
	}
	return b.tr.Subscribe(ctx, runID, after)
}

func (b *failingBus) Capability() core.Capability { return core.Duplex }

func (b *failingBus) Publish(ctx context.Context, f core.Frame) error { return b.tr.Publish(ctx, f) }

// pausedText is a turn whose second delta waits for release.
func pausedText(release <-chan struct{}) modeltest.Turn {
	t := modeltest.Text("Bread ", "is ", "good.")
	t.Pace = func(ctx context.Context, i int) error {
		if i != 1 {
			return nil
		}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return t
}

// A passive stream whose subscription keeps failing while neither the bus
// nor the log brings anything new (the run is idle) does not give up: it
// waits, subscribes again, and follows the run to its terminal crumb once
// the bus delivers again. Before, three such failures in a row closed the
// stream without the run's end.
func TestPassiveStreamOutlastsASubscriptionThatKeepsFailing(t *testing.T) {
	release := make(chan struct{})
	bus := &failingBus{
		tr: corestream.New(corestream.Options{}), subscribed: make(chan int, 16),
		err:  &core.BreadError{Code: "SUBSCRIBER_LAGGED", Message: "the subscriber fell behind"},
		fail: func(n int) bool { return n <= 6 },
	}
	e := newEnv(t, setup{bus: bus, turns: []modeltest.Turn{pausedText(release)}})
	a := e.post(t, "/agents/writer/run", `{"input":"hi","background":true}`)
	if a.status != http.StatusAccepted {
		t.Fatalf("%d %s", a.status, a.body)
	}
	s := e.open(t, "GET", "/runs/"+a.run.RunID+"/stream", "")
	defer s.close()
	go func() {
		for n := range bus.subscribed {
			if n == 7 {
				close(release)
				return
			}
		}
	}()
	got := s.rest()
	if len(got) == 0 || got[len(got)-1].Crumb.CrumbType() != core.TypeAgentRunEnd {
		t.Fatalf("the stream ended with %s, want agent:run:end", types(got))
	}
	if text(got) != "Bread is good." {
		t.Fatalf("text %q", text(got))
	}
}

// A closed bus (the server stops) ends a passive stream at once, without
// waiting for the run.
func TestPassiveStreamEndsWhenTheBusIsClosed(t *testing.T) {
	bus := &failingBus{
		tr: corestream.New(corestream.Options{}), subscribed: make(chan int, 16),
		err:  core.ErrBusClosed,
		fail: func(int) bool { return true },
	}
	e := newEnv(t, setup{bus: bus, turns: []modeltest.Turn{pausedText(make(chan struct{}))}})
	a := e.post(t, "/agents/writer/run", `{"input":"hi","background":true}`)
	if a.status != http.StatusAccepted {
		t.Fatalf("%d %s", a.status, a.body)
	}
	s := e.open(t, "GET", "/runs/"+a.run.RunID+"/stream", "")
	defer s.close()
	got := s.rest()
	for _, f := range got {
		if core.IsTerminal(f.Crumb.CrumbType()) {
			t.Fatalf("a terminal crumb from a run that has not ended: %s", types(got))
		}
	}
}
