package nats

import (
	"context"
	"sync"
	"time"
)

// pending is one encoded frame waiting to be written.
type pending struct {
	n       uint64 // enqueue order, from 1
	subject string // the run's subject
	payload []byte
	pos     string // the Bread-Pos header (see runPos)
}

// outbox is the bounded FIFO between Publish and the publisher goroutine.
// Frames leave it only from the front, written or dropped, so everything
// that is written is written in publish order.
type outbox struct {
	maxItems int
	maxBytes int

	mu      sync.Mutex
	items   []pending // live frames are items[head:]
	head    int
	bytes   int
	lastN   uint64        // n of the newest frame enqueued
	doneN   uint64        // every frame with n <= doneN has left the queue
	changed chan struct{} // closed and replaced whenever frames leave
	ready   chan struct{} // wakes the publisher; capacity 1
}

func newOutbox(maxItems, maxBytes int) *outbox {
	return &outbox{maxItems: maxItems, maxBytes: maxBytes, changed: make(chan struct{}), ready: make(chan struct{}, 1)}
}

// pushResult says what a push had to do to make room.
type pushResult struct {
	dropped  int  // oldest frames dropped
	timedOut bool // waited the full timeout for room
}

// push appends p. When the queue is full it waits up to wait for the
// publisher to make room (not at all when wait is 0), then drops the oldest
// frames until p fits. A frame larger than maxBytes on its own is still
// queued, alone.
func (o *outbox) push(ctx context.Context, p pending, wait time.Duration) pushResult {
	var res pushResult
	o.mu.Lock()
	if !o.fits(len(p.payload)) && wait > 0 {
		tm := time.NewTimer(wait)
		for !o.fits(len(p.payload)) && !res.timedOut {
			ch := o.changed
			o.mu.Unlock()
			select {
			case <-ch:
			case <-tm.C:
				res.timedOut = true
			case <-ctx.Done():
				res.timedOut = true
			}
			o.mu.Lock()
		}
		tm.Stop()
	}
	for o.count() > 0 && !o.fits(len(p.payload)) {
		o.removeFront(1)
		res.dropped++
	}
	if res.dropped > 0 {
		o.notifyChanged()
	}
	o.lastN++
	p.n = o.lastN
	o.items = append(o.items, p)
	o.bytes += len(p.payload)
	o.mu.Unlock()
	select {
	case o.ready <- struct{}{}:
	default:
	}
	return res
}

func (o *outbox) fits(size int) bool {
	return o.count() < o.maxItems && o.bytes+size <= o.maxBytes
}

func (o *outbox) count() int { return len(o.items) - o.head }

// peek copies up to maxItems frames from the front, stopping before the one
// that would take the copy past maxBytes (the first frame always fits).
func (o *outbox) peek(dst []pending, maxItems, maxBytes int) []pending {
	o.mu.Lock()
	defer o.mu.Unlock()
	size := 0
	for i := o.head; i < len(o.items) && len(dst) < maxItems; i++ {
		size += len(o.items[i].payload)
		if i > o.head && size > maxBytes {
			break
		}
		dst = append(dst, o.items[i])
	}
	return dst
}

// ack removes the frames with n <= upTo that are still queued (a full queue
// may already have dropped some of them).
func (o *outbox) ack(upTo uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := 0
	for k < o.count() && o.items[o.head+k].n <= upTo {
		k++
	}
	if k > 0 {
		o.removeFront(k)
		o.notifyChanged()
	}
}

// drain removes every queued frame and returns how many there were.
func (o *outbox) drain() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := o.count()
	if n > 0 {
		o.removeFront(n)
		o.notifyChanged()
	}
	return n
}

// removeFront removes the k oldest frames, 0 < k <= count().
func (o *outbox) removeFront(k int) {
	front := o.items[o.head : o.head+k]
	for i := range front {
		o.bytes -= len(front[i].payload)
	}
	o.doneN = front[k-1].n
	clear(front) // release the payloads
	o.head += k
	switch {
	case o.head == len(o.items) && cap(o.items) > 4096:
		o.items, o.head = nil, 0 // let a burst's large array go
	case o.head == len(o.items):
		o.items, o.head = o.items[:0], 0
	case o.head > 1024 && o.head > len(o.items)/2:
		n := copy(o.items, o.items[o.head:])
		clear(o.items[n:])
		o.items, o.head = o.items[:n], 0
	}
}

func (o *outbox) notifyChanged() {
	close(o.changed)
	o.changed = make(chan struct{})
}

// len returns the number of queued frames.
func (o *outbox) len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.count()
}

// flush waits until every frame enqueued before the call has left the queue.
func (o *outbox) flush(ctx context.Context) error {
	o.mu.Lock()
	target := o.lastN
	for o.doneN < target {
		ch := o.changed
		o.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		o.mu.Lock()
	}
	o.mu.Unlock()
	return nil
}
