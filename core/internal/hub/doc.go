// Package hub is the in-process fan-out behind the embedded transport: per-key
// replay buffers bounded by size that never drop an item at or above the
// publisher's floor (what is not durable elsewhere yet), a bounded number of
// tracked keys (least recently published evicted first), and subscribers
// with their own queues so a slow subscriber never blocks the publisher.
//
// It is generic over the item so that its tests need no core types.
package hub
