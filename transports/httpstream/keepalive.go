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
// It ticks every third of the heartbeat and writes once two ticks in a row
// saw nothing written, so no silence lasts longer than the heartbeat. A
// frame held for the response's end (len(buf) > 0) is never flushed early
// by a tick.
type keepAlive struct {
	mu    sync.Mutex
	s     *response
	t     *time.Timer
	every time.Duration
	quiet int  // ticks in a row without a write
	wrote bool // something was written since the last tick
	done  bool
}

// startKeepAlive starts the ticks of a stream whose heartbeat is
// heartbeat.
func startKeepAlive(s *response, heartbeat time.Duration) *keepAlive {
	k := &keepAlive{s: s, every: heartbeat / 3}
	if k.every <= 0 {
		k.every = heartbeat
	}
	k.t = time.AfterFunc(k.every, k.tick)
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

// stop ends the ticks; none writes after it returns.
func (k *keepAlive) stop() {
	k.mu.Lock()
	k.done = true
	k.t.Stop()
	k.mu.Unlock()
}
