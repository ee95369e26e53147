package hub

import (
	"container/list"
	"context"
	"errors"
	"iter"
	"sync"
)

// Options bound a Hub's memory.
type Options struct {
	// MaxBytesPerKey is how many bytes (as the Hub's size function counts
	// them) each key's replay buffer keeps of items below the key's floor
	// (default 256 KiB).
	MaxBytesPerKey int
	// MaxPerKey, when positive, also bounds the items below the floor that
	// each buffer keeps.
	MaxPerKey int
	// MaxPendingBytesPerKey bounds a buffer whatever its floor (default
	// 64 MiB): past it the oldest items go even at or above the floor. Only
	// a publisher whose floor stopped moving (a crumb log that stopped
	// committing) reaches it.
	MaxPendingBytesPerKey int
	// MaxKeys is how many keys keep a replay buffer (default 1000).
	MaxKeys int
	// MaxQueue is how many undelivered items a subscriber may fall behind
	// before it is dropped with ErrSlowSubscriber (default 10000).
	MaxQueue int
}

// ErrSlowSubscriber ends a subscription that fell MaxQueue items behind.
var ErrSlowSubscriber = errors.New("hub: subscriber fell too far behind")

// Hub fans items out per key. The zero value is not usable; call New.
type Hub[T any] struct {
	opts Options
	seq  func(T) int64
	size func(T) int

	mu      sync.Mutex
	buffers map[string]*list.Element // of *ring[T]
	lru     *list.List               // front = least recently published
	subs    map[string]map[*sub[T]]struct{}
}

// ring is one key's replay buffer, oldest first: items[head:] are live.
type ring[T any] struct {
	key   string
	items []T
	head  int
	bytes int
}

type sub[T any] struct {
	queue    []T
	signal   chan struct{}
	overflow bool
}

// New returns a Hub that orders replay by seq and bounds buffers by size.
func New[T any](opts Options, seq func(T) int64, size func(T) int) *Hub[T] {
	if opts.MaxBytesPerKey <= 0 {
		opts.MaxBytesPerKey = 256 << 10
	}
	if opts.MaxPendingBytesPerKey <= 0 {
		opts.MaxPendingBytesPerKey = 64 << 20
	}
	if opts.MaxKeys <= 0 {
		opts.MaxKeys = 1000
	}
	if opts.MaxQueue <= 0 {
		opts.MaxQueue = 10000
	}
	return &Hub[T]{
		opts:    opts,
		seq:     seq,
		size:    size,
		buffers: map[string]*list.Element{},
		lru:     list.New(),
		subs:    map[string]map[*sub[T]]struct{}{},
	}
}

// Publish buffers v under key and queues it for every subscriber of key. It
// never blocks on a subscriber. floor is the publisher's retention floor
// (core.Frame.Durable): items with a seq at or above it stay buffered until
// a later floor passes them; 0 means none is durable elsewhere, and the
// buffer keeps what its bounds allow.
func (h *Hub[T]) Publish(key string, v T, floor int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.buffer(key).push(h, v, floor)
	for s := range h.subs[key] {
		if s.overflow {
			continue
		}
		if len(s.queue) >= h.opts.MaxQueue {
			s.overflow = true
		} else {
			s.queue = append(s.queue, v)
		}
		select {
		case s.signal <- struct{}{}:
		default:
		}
	}
}

func (h *Hub[T]) buffer(key string) *ring[T] {
	if el, ok := h.buffers[key]; ok {
		h.lru.MoveToBack(el)
		return el.Value.(*ring[T])
	}
	if h.lru.Len() >= h.opts.MaxKeys {
		// The least recently published key's buffer, its element and (if
		// small) its array serve the new key: once MaxKeys keys have
		// published, as in a long-lived server, a key costs no allocation.
		// Every use of a ring holds h.mu.
		oldest := h.lru.Front()
		r := oldest.Value.(*ring[T])
		delete(h.buffers, r.key)
		items := r.items[:0]
		if cap(items) > maxReusedItems {
			items = make([]T, 0, 4)
		} else {
			clear(r.items[:cap(r.items)])
		}
		*r = ring[T]{key: key, items: items}
		h.lru.MoveToBack(oldest)
		h.buffers[key] = oldest
		return r
	}
	// Room for a short run's frames up front: growing from empty took
	// three allocations for three frames.
	r := &ring[T]{key: key, items: make([]T, 0, 4)}
	h.buffers[key] = h.lru.PushBack(r)
	return r
}

// maxReusedItems bounds the array an evicted buffer hands to the next key:
// a long run's is left to the collector.
const maxReusedItems = 64

// push appends v, then drops the oldest items while the buffer is over its
// bounds and the oldest is below floor (seqs only grow along the buffer, so
// every later item is at or above floor too), or while it is over the
// pending bound. The newest item always stays.
func (r *ring[T]) push(h *Hub[T], v T, floor int64) {
	r.items = append(r.items, v)
	r.bytes += h.size(v)
	o := &h.opts
	for len(r.items)-r.head > 1 {
		n := len(r.items) - r.head
		over := r.bytes > o.MaxBytesPerKey || (o.MaxPerKey > 0 && n > o.MaxPerKey)
		if !over {
			break
		}
		oldest := r.items[r.head]
		if floor > 0 && h.seq(oldest) >= floor && r.bytes <= o.MaxPendingBytesPerKey {
			break
		}
		r.bytes -= h.size(oldest)
		var zero T
		r.items[r.head] = zero
		r.head++
	}
	// Reuse the array once the dropped head is most of it.
	if r.head > 64 && r.head > len(r.items)/2 {
		n := copy(r.items, r.items[r.head:])
		clear(r.items[n:])
		r.items, r.head = r.items[:n], 0
	}
}

// each calls f for the buffered items in publish order.
func (r *ring[T]) each(f func(T)) {
	for _, v := range r.items[r.head:] {
		f(v)
	}
}

// Subscribe replays the buffered items of key with seq > afterSeq, then
// yields live items until ctx is done or the consumer stops. Replay and
// registration happen under one lock, so nothing published in between is
// lost or doubled. A subscriber that falls MaxQueue items behind receives
// ErrSlowSubscriber and ends.
func (h *Hub[T]) Subscribe(ctx context.Context, key string, afterSeq int64) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		s := h.register(key, afterSeq)
		defer h.unsubscribe(key, s)

		var batch []T
		for {
			h.mu.Lock()
			batch, s.queue = s.queue, batch[:0]
			overflow := s.overflow
			h.mu.Unlock()
			for _, v := range batch {
				if !yield(v, nil) {
					return
				}
			}
			clear(batch)
			if overflow {
				var zero T
				yield(zero, ErrSlowSubscriber)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-s.signal:
			}
		}
	}
}

// register adds a subscriber of key with the buffered items after afterSeq
// queued, under one lock with the replay.
func (h *Hub[T]) register(key string, afterSeq int64) *sub[T] {
	s := &sub[T]{signal: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if el, ok := h.buffers[key]; ok {
		el.Value.(*ring[T]).each(func(v T) {
			if h.seq(v) > afterSeq {
				s.queue = append(s.queue, v)
			}
		})
	}
	if len(s.queue) > 0 {
		s.signal <- struct{}{}
	}
	set := h.subs[key]
	if set == nil {
		set = map[*sub[T]]struct{}{}
		h.subs[key] = set
	}
	set[s] = struct{}{}
	return s
}

// Watch is a subscription its owner waits on, with no goroutine of its
// own: Ready is signalled when items may be queued, Take hands them over.
// The owner must Close it.
type Watch[T any] struct {
	h   *Hub[T]
	key string
	s   *sub[T]
}

// Watch subscribes to key like Subscribe, the replay of buffered items
// with seq > afterSeq first, without a goroutine to range over it.
func (h *Hub[T]) Watch(key string, afterSeq int64) *Watch[T] {
	return &Watch[T]{h: h, key: key, s: h.register(key, afterSeq)}
}

// Ready is signalled (capacity one) whenever items were queued.
func (w *Watch[T]) Ready() <-chan struct{} { return w.s.signal }

// Take appends the queued items to buf; once the subscriber fell MaxQueue
// items behind, it reports ErrSlowSubscriber after them.
func (w *Watch[T]) Take(buf []T) ([]T, error) {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	buf = append(buf, w.s.queue...)
	clear(w.s.queue)
	w.s.queue = w.s.queue[:0]
	if w.s.overflow {
		return buf, ErrSlowSubscriber
	}
	return buf, nil
}

// Close ends the subscription.
func (w *Watch[T]) Close() { w.h.unsubscribe(w.key, w.s) }

func (h *Hub[T]) unsubscribe(key string, s *sub[T]) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if set := h.subs[key]; set != nil {
		delete(set, s)
		if len(set) == 0 {
			delete(h.subs, key)
		}
	}
}

// Subscribers returns how many subscriptions key has; tests use it to wait
// for a subscriber to attach.
func (h *Hub[T]) Subscribers(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs[key])
}
