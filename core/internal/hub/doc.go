// Package hub is the in-process fan-out behind the embedded transport: per-key
// bounded replay buffers, a bounded number of tracked keys (least recently
// published evicted first), and subscribers with their own queues so a slow
// subscriber never blocks the publisher.
//
// It is generic so that both core (for its default transport) and core/stream
// (the exported transport) can use it without an import cycle.
package hub
