package httpstream

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/breadai/bread/core"
)

// response is one streamed HTTP response. Every piece is written and
// flushed at once, so a reader sees each crumb as it happens. After the
// first failed write (the client went away) every call reports false.
type response struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	format Format
	log    *slog.Logger
	buf    []byte
	pool   *bufPool
	pooled *[]byte // buf came from pool; release gives it back
	dead   bool
	beats  bool      // the stream sends heartbeats: flush keeps last
	last   time.Time // when something was last written, for heartbeat
}

// open sends the headers and the preamble of the format the request asked
// for; from here on the status is 200 whatever happens, so failures travel
// in the stream.
func (h *handlers) open(w http.ResponseWriter, r *http.Request) *response {
	s := h.openBuffered(w, r)
	s.flush()
	return s
}

// openBuffered is open without the flush: the status line, headers and
// the format's opening go out with the first frame, in one write. A run
// route has that frame in hand already; a passive tail may wait, so it
// uses open.
func (h *handlers) openBuffered(w http.ResponseWriter, r *http.Request) *response {
	format := negotiate(r.Header, h.g.format)
	hd := w.Header()
	hd.Set("Content-Type", format.ContentType())
	hd.Set("Cache-Control", "no-cache")
	// Reverse proxies such as nginx buffer responses unless told not to.
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &response{w: w, rc: http.NewResponseController(w), format: format, log: h.log, pool: &h.bufs}
	s.pooled = h.bufs.get()
	s.buf = s.format.AppendOpen((*s.pooled)[:0])
	return s
}

// bufPool holds the buffers frames are encoded into: a run's stream
// otherwise grew a new one, allocation by allocation, for every request.
// The zero value is ready.
type bufPool struct{ p sync.Pool }

func (b *bufPool) get() *[]byte {
	if v, ok := b.p.Get().(*[]byte); ok {
		return v
	}
	buf := make([]byte, 0, 1024)
	return &buf
}

// maxPooledBuf bounds the buffers kept for reuse: one that grew for a huge
// frame is left to the collector.
const maxPooledBuf = 64 << 10

// release gives the frame buffer back for another response. Call it once
// the response is done: net/http has copied every byte written.
func (s *response) release() {
	if s.pooled != nil && cap(s.buf) <= maxPooledBuf {
		*s.pooled = s.buf[:0]
		s.pool.p.Put(s.pooled)
	}
	s.pooled, s.buf = nil, nil
}

func (s *response) flush() bool {
	if s.dead {
		return false
	}
	if len(s.buf) > 0 {
		if _, err := s.w.Write(s.buf); err != nil {
			s.dead = true
			return false
		}
		s.buf = s.buf[:0]
	}
	if err := s.rc.Flush(); err != nil {
		s.dead = true
		return false
	}
	if s.beats {
		s.last = time.Now() // a clock read per frame only where it is used
	}
	return true
}

// crumb writes and flushes one client-safe frame. A crumb that cannot be
// encoded is logged and skipped: one bad payload must not end the stream.
func (s *response) crumb(f core.Frame) bool {
	if !s.hold(f) {
		return !s.dead
	}
	return s.flush()
}

// hold encodes one client-safe frame into the pending bytes without
// writing them; it reports false, with the frame logged and dropped, when
// the frame cannot be encoded.
func (s *response) hold(f core.Frame) bool {
	var err error
	pending := len(s.buf) // what openBuffered or an earlier hold left unsent
	s.buf, err = s.format.AppendCrumb(s.buf, f)
	if err != nil {
		s.buf = s.buf[:pending]
		s.log.Warn("bread: a crumb could not be encoded for the stream", append(frameAttrs(f), "type", f.Crumb.CrumbType(), "error", err)...)
		return false
	}
	return true
}

// failure ends the stream with an agent:error frame, handed to net/http
// unflushed as end does.
func (s *response) failure(f core.Frame) {
	var err error
	pending := len(s.buf)
	s.buf, err = s.format.AppendFailure(s.buf, f)
	if err != nil {
		s.buf = s.buf[:pending]
		s.log.Warn("bread: a failure could not be encoded for the stream", append(frameAttrs(f), "error", err)...)
	}
	s.end()
}

// end hands what is pending to net/http without flushing it: when the
// handler returns, net/http writes it with the response's terminating
// chunk, in one write instead of two. Only the last frames of a stream may
// go this way; a frame meant to be seen at once goes through flush.
func (s *response) end() {
	if s.dead || len(s.buf) == 0 {
		return
	}
	if _, err := s.w.Write(s.buf); err != nil {
		s.dead = true
	}
	s.buf = s.buf[:0]
}

// fail ends the stream with a synthetic agent:error for a failure that
// happened outside a run, such as an unreadable body.
func (s *response) fail(agentID string, err error) {
	s.failure(core.Frame{Crumb: failure(agentID, err)})
}

// heartbeat writes a keep-alive unless something was written within idle.
// The stream must have been opened with beats set.
func (s *response) heartbeat(idle time.Duration) bool {
	if time.Since(s.last) < idle {
		return !s.dead
	}
	s.buf = s.format.AppendHeartbeat(s.buf)
	return s.flush()
}

// writeError answers a request that is refused before its stream opens.
func writeError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]core.ClientError{"error": {Code: code, Message: message}})
}

// baseAttrs are the log attributes of the run a crumb belongs to.
func baseAttrs(b *core.CrumbBase) []any {
	return core.RunLogAttrs(b.RunID, b.SessionID, b.AgentID)
}

// frameAttrs are the log attributes of the run a frame belongs to: the
// frame's run id, the session and agent of its crumb.
func frameAttrs(f core.Frame) []any {
	var session, agent string
	if f.Crumb != nil {
		b := f.Crumb.Base()
		session, agent = b.SessionID, b.AgentID
		if f.RunID == "" {
			f.RunID = b.RunID
		}
	}
	return core.RunLogAttrs(f.RunID, session, agent)
}
