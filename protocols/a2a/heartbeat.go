package a2a

import (
	"net/http"
	"sync"
	"time"
)

// DefaultHeartbeat is the default of Options.Heartbeat.
const DefaultHeartbeat = 15 * time.Second

// heartbeat returns the stream heartbeat period; 0 for none.
func (p *Plugin) heartbeat() time.Duration {
	switch h := p.opts.Heartbeat; {
	case h == 0:
		return DefaultHeartbeat
	case h < 0:
		return 0
	default:
		return h
	}
}

// heartbeatWriter sends an SSE comment (": keep-alive") on an event stream
// that stayed silent for a period, so proxies that cut idle connections
// (30 to 60 s is common) keep a stream whose run waits on a slow model or
// tool. a2a-go's SSE writer sends none, and the v1.0 binding's writer is
// ours: wrapping the ResponseWriter serves both.
//
// A comment goes out only between events: the writers write an event in
// several Writes and then Flush, so a comment is written only when the last
// call was a Flush. Every call holds mu, so the beat never interleaves with
// an event.
type heartbeatWriter struct {
	http.ResponseWriter
	period time.Duration

	mu        sync.Mutex
	streaming bool // the response is text/event-stream
	boundary  bool // the last call was a Flush: no event is half written
	last      time.Time
	failed    bool // a beat failed to write: the client is gone
}

// serveWithHeartbeat serves h with w wrapped so that an event stream beats
// every period; it returns when h does, its beating goroutine stopped.
func serveWithHeartbeat(h http.Handler, w http.ResponseWriter, r *http.Request, period time.Duration) {
	if period <= 0 {
		h.ServeHTTP(w, r)
		return
	}
	hw := &heartbeatWriter{ResponseWriter: w, period: period, last: time.Now()}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				hw.beat()
			}
		}
	})
	defer wg.Wait()
	defer close(done)
	h.ServeHTTP(hw, r)
}

func (w *heartbeatWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.streaming = code == http.StatusOK && w.Header().Get("Content-Type") == "text/event-stream"
	w.boundary = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *heartbeatWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.boundary = false
	w.last = time.Now()
	return w.ResponseWriter.Write(b)
}

// FlushError is what http.ResponseController calls to flush.
func (w *heartbeatWriter) FlushError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *heartbeatWriter) Flush() { _ = w.FlushError() }

func (w *heartbeatWriter) flushLocked() error {
	w.boundary = true
	w.last = time.Now()
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the writer's other methods.
func (w *heartbeatWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// beat writes a comment when the stream is between events and has been
// silent for a period.
func (w *heartbeatWriter) beat() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.streaming || !w.boundary || w.failed || time.Since(w.last) < w.period {
		return
	}
	if _, err := w.ResponseWriter.Write([]byte(": keep-alive\n\n")); err != nil {
		w.failed = true
		return
	}
	if w.flushLocked() != nil {
		w.failed = true
	}
}
