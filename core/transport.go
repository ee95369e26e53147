package core

import (
	"context"
	"iter"
)

// Frame is one crumb on the transport: the run it belongs to, its seq (a
// watermark for deltas) and the crumb.
type Frame struct {
	RunID string
	Seq   int64
	Crumb Crumb
}

// Capability says what a transport can do.
type Capability uint8

const (
	// Sink buses only receive published frames (a log shipper, an audit
	// sink): tails cannot follow them.
	Sink Capability = iota
	// Duplex transports also implement Subscriber.
	Duplex
)

// String returns "sink" or "duplex".
func (c Capability) String() string {
	if c == Duplex {
		return "duplex"
	}
	return "sink"
}

// BreadTransport is the live fabric between replicas of one app: the choke
// point publishes every crumb on it, and a Subscriber can tail any run.
//
// The contract, checked by core/transporttest: delivery is at-least-once;
// order is preserved per run (not across runs); frames survive a JSON round
// trip; a subscriber's failure never reaches the publisher. The store is the
// durable history; a transport's own replay is a bounded convenience.
//
// Publish must not block on slow subscribers. A transport may also implement
// Subscriber, Mounter, Starter and io.Closer.
type BreadTransport interface {
	Capability() Capability
	Publish(ctx context.Context, f Frame) error
}

// Subscriber is implemented by duplex transports. Subscribe replays the
// retained frames of a run with Seq > afterSeq, in order, then yields live
// frames until ctx is done or the consumer stops ranging. A transport that
// cannot keep up with a subscriber yields an error and ends, so the client
// can catch up from the store rather than silently miss frames.
type Subscriber interface {
	Subscribe(ctx context.Context, runID string, afterSeq int64) iter.Seq2[Frame, error]
}

// Watcher is an optional Subscriber capability: a subscription its owner
// waits on as a channel instead of ranging over it on a goroutine of its
// own. The in-process transport has it, so an idle passive stream costs no
// goroutine beyond its connection's.
type Watcher interface {
	// Watch subscribes like Subscribe: frames with Seq > afterSeq, the
	// buffered ones first.
	Watch(runID string, afterSeq int64) Watch
}

// Watch is one Watcher subscription.
type Watch interface {
	// Ready is signalled whenever frames were queued.
	Ready() <-chan struct{}
	// Take appends the queued frames to buf; an error after them ends the
	// subscription (the watcher fell too far behind).
	Take(buf []Frame) ([]Frame, error)
	// Close ends the subscription.
	Close()
}

// Mounter is implemented by HTTP ingresses (transports/httpstream's, which
// every server mounts, or a plugin's own): Mount adds their routes through
// the server's Router, using only the Runtime.
type Mounter interface {
	Mount(r Router, rt Runtime)
}

// Starter is implemented by transports, stores and remote agents that open
// connections: the engine calls Start once, when it starts.
type Starter interface {
	Start(ctx context.Context) error
}
