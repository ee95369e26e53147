package core

import (
	"context"
	"iter"
)

// Frame is one crumb on the bus: the run it belongs to, its seq (a
// watermark for deltas) and the crumb.
type Frame struct {
	RunID string
	Seq   int64
	Crumb Crumb
	// Durable is the publisher's retention floor for the run: every frame
	// of the run with a Seq below it is held by the crumb log (or, like
	// pipeline:step:*, never will be), and none at or above it may be
	// assumed to be. A bus that replays must keep every frame at or
	// above the floor, whatever its own bound, and may drop the ones below:
	// a reader catches up from the log up to the floor and from the
	// bus after it, so a reconnect at any moment loses nothing.
	// Zero means the run has no durable history (the store keeps no crumb
	// log, its logging failed, a relayed remote run): retention is the
	// bus's own bound. It never travels on the wire; the choke point
	// sets it from the log writes it has seen committed.
	Durable int64
}

// Capability says what a bus can do.
type Capability uint8

const (
	// Sink buses only receive published frames (a log shipper, an audit
	// sink): tails cannot follow them.
	Sink Capability = iota
	// Duplex buses also implement Subscriber.
	Duplex
)

// String returns "sink" or "duplex".
func (c Capability) String() string {
	if c == Duplex {
		return "duplex"
	}
	return "sink"
}

// BreadBus is the bus port: the live fabric between replicas of one app.
// The choke point publishes every crumb on it, and a Subscriber can tail
// any run. Everything above the port uses it through a Bus (NewBus). (The
// original bread called it a transport, a word it also used for the HTTP
// stream formats, which here are not a bus: transports/httpstream.)
//
// The contract, checked by core/transporttest: delivery is at-least-once;
// order is preserved per run (not across runs); frames survive a JSON round
// trip; a subscriber's failure never reaches the publisher. The store is the
// durable history; a bus's own replay is bounded, but keeps every frame at
// or above its Frame.Durable floor, so that the log and the replay
// together hold every frame of a run.
//
// Publish must not block on slow subscribers. A bus may also implement
// Subscriber, Watcher, Starter, Pinger and io.Closer.
type BreadBus interface {
	Capability() Capability
	Publish(ctx context.Context, f Frame) error
}

// Subscriber is implemented by duplex buses. Subscribe replays the
// retained frames of a run with Seq > afterSeq, in order, then yields live
// frames until ctx is done or the consumer stops ranging. A bus that
// cannot keep up with a subscriber yields an error and ends, so the client
// can catch up from the store rather than silently miss frames.
type Subscriber interface {
	Subscribe(ctx context.Context, runID string, afterSeq int64) iter.Seq2[Frame, error]
}

// Watcher is an optional Subscriber capability: a subscription its owner
// waits on as a channel instead of ranging over it on a goroutine of its
// own. The in-process bus has it, so an idle passive stream costs no
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

// Starter is implemented by buses, stores and remote agents that open
// connections: the engine calls Start once, when it starts.
type Starter interface {
	Start(ctx context.Context) error
}
