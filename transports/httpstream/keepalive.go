package httpstream

import (
	"sync"
	"time"
)

// keepAlive sends the format's heartbeat (a blank line in NDJSON, which
// every client skips; the comment ": ping" in SSE) on a run-starting
// stream while its run is silent: a model that thinks for 45 s before its
// first token would otherwise leave the connection idle past the 30 to
// 60 s after which common proxies cut it. It is a timer, not a goroutine
// of the request's: the stream's writes and its ticks share mu, and stop,
// called before the handler returns, ends it.
//
// A keepAlive whose timer stop caught before it fired goes back to the
// handlers' pool and is reused with its timer (Reset), so a short run
// allocates no timer, closure or keepAlive of its own; one whose tick was
// already under way is left to the garbage collector.
//
// It ticks every third of the heartbeat and writes once two ticks in a row
// saw nothing written, so no silence lasts longer than the heartbeat. A
// frame held for the response's end (len(buf) > 0) is never flushed early
// by a tick.
type keepAlive struct {
	pool  *sync.Pool // where stop puts it back
	mu    sync.Mutex
	s     *response
	t     *time.Timer
	every time.Duration
	quiet int  // ticks in a row without a write
	wrote bool // something was written since the last tick
	done  bool
}

// startKeepAlive starts the ticks of a stream whose heartbeat is
// heartbeat, with a keepAlive from pool when it holds one.
func startKeepAlive(pool *sync.Pool, s *response, heartbeat time.Duration) *keepAlive {
	every := heartbeat / 3
	if every <= 0 {
		every = heartbeat
	}
	if k, ok := pool.Get().(*keepAlive); ok {
		k.mu.Lock()
		k.s, k.every, k.quiet, k.wrote, k.done = s, every, 0, false, false
		k.t.Reset(every)
		k.mu.Unlock()
		return k
	}
	k := &keepAlive{pool: pool, s: s, every: every}
	k.t = time.AfterFunc(every, k.tick)
	return k
}

func (k *keepAlive) tick() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.done {
		return
	}
	switch {
	case k.wrote:
		k.wrote, k.quiet = false, 0
	case len(k.s.buf) > 0 || k.s.dead:
	default:
		if k.quiet++; k.quiet >= 2 {
			k.quiet = 0
			k.s.buf = k.s.format.AppendHeartbeat(k.s.buf)
			k.s.flush()
		}
	}
	k.t.Reset(k.every)
}

// lock takes the stream for a write; unlock gives it back and counts the
// write.
func (k *keepAlive) lock() { k.mu.Lock() }

func (k *keepAlive) unlock() {
	k.wrote = true
	k.mu.Unlock()
}

// stop ends the ticks; none writes after it returns. The caller must not
// use k after it: it may serve another stream at once.
func (k *keepAlive) stop() {
	k.mu.Lock()
	k.done = true
	// true: the timer had not fired, so no tick runs now or later and k
	// may serve another stream. false: a tick may be waiting for mu; it
	// finds done and returns, and k is not reused.
	reusable := k.t.Stop()
	k.s = nil
	k.mu.Unlock()
	if reusable {
		k.pool.Put(k)
	}
}
