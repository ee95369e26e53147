package core

import (
	"context"
	"errors"
	"io"
	"iter"
	"sync"
	"sync/atomic"
)

// Bus is the bus as everything above the port uses it, as Storage is the
// store: the choke point publishes through it, the streaming routes and the
// protocols subscribe through it, and nothing else looks at the BreadBus
// or its optional parts. NewBus checks them once; after Close every call
// fails with an error matching ErrBusClosed.
//
// A wrapper around a bus keeps the capabilities of the bus it wraps by
// implementing As (see As). A Bus is safe for concurrent use.
type Bus struct {
	bus        BreadBus
	capability Capability
	caps       BusCapability

	sub     Subscriber
	watcher Watcher
	starter Starter
	pinger  Pinger
	closer  io.Closer

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// BusCapability names optional parts of a bus; a set of them is their
// bitwise or.
type BusCapability uint8

// The optional capabilities of a bus.
const (
	BusSubscribe BusCapability = 1 << iota // Subscriber, on a Duplex bus: runs can be tailed
	BusWatch                               // Watcher, on a Duplex bus: a tail needs no goroutine
	BusStart                               // Starter: opens connections at start
	BusPing                                // Pinger: answers a readiness probe
	BusClose                               // io.Closer: released at stop
	busCapabilityEnd
)

// BusCapabilities lists every bus capability, one bit each, in order.
func BusCapabilities() []BusCapability { return eachBit(busCapabilityEnd) }

var busCapabilityNames = [...]string{"Subscriber", "Watcher", "Starter", "Pinger", "io.Closer"}

// String names the capabilities of c, joined by "|"; "none" for none.
func (c BusCapability) String() string {
	return capabilityString(c, busCapabilityNames[:])
}

// NewBus returns the Bus over bus, with its Capability and each optional
// part found once, by type assertion or through the bus's As method. A bus
// subscribes only when it reports Duplex and is a Subscriber. A bus that is
// already a *Bus is returned as it is; a nil bus is a nil Bus.
func NewBus(bus BreadBus) *Bus {
	if bus == nil {
		return nil
	}
	if b, ok := bus.(*Bus); ok {
		return b
	}
	b := &Bus{bus: bus, capability: bus.Capability()}
	if b.capability == Duplex {
		b.sub = found[Subscriber](&b.caps, BusSubscribe, bus)
		if b.sub != nil {
			b.watcher = found[Watcher](&b.caps, BusWatch, bus)
		}
	}
	b.starter = found[Starter](&b.caps, BusStart, bus)
	b.pinger = found[Pinger](&b.caps, BusPing, bus)
	b.closer = found[io.Closer](&b.caps, BusClose, bus)
	return b
}

// Has reports whether the bus has every capability in c.
func (b *Bus) Has(c BusCapability) bool { return b.caps&c == c }

// Capabilities returns the set of capabilities the bus has.
func (b *Bus) Capabilities() BusCapability { return b.caps }

// As finds in the bus what target points to (see As).
func (b *Bus) As(target any) bool { return As(b.bus, target) }

// Capability implements BreadBus: what the bus reported when the Bus was
// built.
func (b *Bus) Capability() Capability { return b.capability }

// Publish implements BreadBus.
func (b *Bus) Publish(ctx context.Context, f Frame) error {
	if b.closed.Load() {
		return errBusClosed
	}
	return b.bus.Publish(ctx, f)
}

// Subscribe implements Subscriber. A bus that cannot subscribe yields one
// error matching ErrNotImplemented, a closed Bus one matching ErrBusClosed.
func (b *Bus) Subscribe(ctx context.Context, runID string, afterSeq int64) iter.Seq2[Frame, error] {
	if err := b.can(BusSubscribe); err != nil {
		return func(yield func(Frame, error) bool) { yield(Frame{}, err) }
	}
	return b.sub.Subscribe(ctx, runID, afterSeq)
}

// Watch subscribes like Subscribe, as a Watch its owner waits on. A bus
// that is a Watcher watches with no goroutine; for any other bus that can
// subscribe, the Watch runs the subscription on a goroutine of its own,
// which ctx ending or Close stops, and queues at most maxWatchQueue frames
// for an owner that takes slower than the run publishes (then Take fails).
// A subscription the bus ends without an error makes Take fail with
// ErrSubscriptionEnded. A bus that cannot subscribe gives a Watch whose
// Take fails at once, with ErrNotImplemented's code (ErrBusClosed's after
// Close).
func (b *Bus) Watch(ctx context.Context, runID string, afterSeq int64) Watch {
	if err := b.can(BusSubscribe); err != nil {
		return failedWatch{err}
	}
	if b.watcher != nil {
		return b.watcher.Watch(runID, afterSeq)
	}
	return newSubscriptionWatch(ctx, b.sub, runID, afterSeq)
}

// Start starts a bus that opens connections (Starter); without one it
// does nothing. The engine calls it once, when it starts.
func (b *Bus) Start(ctx context.Context) error {
	if b.closed.Load() {
		return errBusClosed
	}
	if b.starter == nil {
		return nil
	}
	return b.starter.Start(ctx)
}

// Ping reports whether the bus answers now (Pinger); a bus without Ping is
// taken to answer while the Bus is open.
func (b *Bus) Ping(ctx context.Context) error {
	if b.closed.Load() {
		return errBusClosed
	}
	if b.pinger == nil {
		return nil
	}
	return b.pinger.Ping(ctx)
}

// Close refuses every later call with ErrBusClosed and closes the bus
// (io.Closer). Closing again returns what the first Close returned.
func (b *Bus) Close() error {
	b.closeOnce.Do(func() {
		b.closed.Store(true)
		if b.closer != nil {
			b.closeErr = b.closer.Close()
		}
	})
	return b.closeErr
}

func (b *Bus) can(c BusCapability) error {
	if b.closed.Load() {
		return errBusClosed
	}
	if b.caps&c == 0 {
		return &BreadError{Code: CodeNotImplemented, Message: "the bus does not implement core." + c.String() + " (or is not Duplex)",
			Context: map[string]any{"capability": c.String()}}
	}
	return nil
}

var errBusClosed = &BreadError{Code: CodeBusClosed, Message: "the bus is closed"}

// ErrSubscriptionEnded is what Take of a Watch returns once the bus ended
// its subscription without an error (a bus closing, say): unlike an error,
// which a tail answers by catching up from the store and subscribing again,
// it means no more frames will come.
var ErrSubscriptionEnded = errors.New("bread: the bus ended the subscription")

// maxWatchQueue bounds the frames a goroutine-backed Watch holds for an
// owner that takes slower than the run publishes; past it the owner
// catches up from the store instead.
const maxWatchQueue = 10000

var errWatchOverflow = errors.New("bread: the subscriber fell too far behind the live frames")

// subscriptionWatch is the Watch of a bus that is a Subscriber but not a
// Watcher: one subscription ranged on a goroutine the Watch owns, its
// frames queued for Take.
type subscriptionWatch struct {
	cancel context.CancelFunc
	done   chan struct{}
	ready  chan struct{}

	mu    sync.Mutex
	queue []Frame
	err   error
}

func newSubscriptionWatch(ctx context.Context, sub Subscriber, runID string, afterSeq int64) *subscriptionWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &subscriptionWatch{cancel: cancel, done: make(chan struct{}), ready: make(chan struct{}, 1)}
	go w.run(ctx, sub, runID, afterSeq)
	return w
}

func (w *subscriptionWatch) run(ctx context.Context, sub Subscriber, runID string, afterSeq int64) {
	defer close(w.done)
	defer func() {
		w.mu.Lock()
		if w.err == nil {
			w.err = ErrSubscriptionEnded
		}
		w.mu.Unlock()
		w.wake()
	}()
	for f, err := range sub.Subscribe(ctx, runID, afterSeq) {
		w.mu.Lock()
		switch {
		case err != nil:
			w.err = err
		case len(w.queue) >= maxWatchQueue:
			w.err = errWatchOverflow
		default:
			w.queue = append(w.queue, f)
		}
		failed := w.err != nil
		w.mu.Unlock()
		w.wake()
		if failed {
			return
		}
	}
}

func (w *subscriptionWatch) wake() {
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

// Ready implements Watch.
func (w *subscriptionWatch) Ready() <-chan struct{} { return w.ready }

// Take implements Watch.
func (w *subscriptionWatch) Take(buf []Frame) ([]Frame, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	buf = append(buf, w.queue...)
	clear(w.queue)
	w.queue = w.queue[:0]
	return buf, w.err
}

// Close implements Watch: it ends the subscription and waits for its
// goroutine.
func (w *subscriptionWatch) Close() {
	w.cancel()
	<-w.done
}

// failedWatch is the Watch of a bus that cannot subscribe: always ready,
// and failing.
type failedWatch struct{ err error }

var alwaysReady = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func (w failedWatch) Ready() <-chan struct{}            { return alwaysReady }
func (w failedWatch) Take(buf []Frame) ([]Frame, error) { return buf, w.err }
func (failedWatch) Close()                              {}
