package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/breadai/bread/core"
)

// bodyClock runs ahead of every guard and middleware. A declared
// Content-Length over max costs nothing to refuse: 413 at once, reading
// nothing. Any other request with a body gets a read deadline on its
// connection, timeout from now, and its body is capped at max: whoever
// reads it (bodyCap, or an auth strategy or plugin middleware before it)
// reads at most max bytes (then *http.MaxBytesError) within that time or
// fails, so a body can neither grow past the cap nor hold its connection
// by never coming. The deadline is set here rather than in the route
// because a plugin middleware may wrap the ResponseWriter in a type
// http.ResponseController cannot see through.
//
// The body itself is read by bodyCap, behind the guards: reading a
// stranger's chunked body up front would let anyone make the server buffer
// max bytes per connection and keep every refusal waiting for a body.
//
// Until bodyCap admits the body, the response closes the connection, and
// once the handler returns the deadline is moved to now: net/http would
// otherwise read up to 256 KiB of what is left of the body, at the
// client's pace, before closing. So a request refused before its body was
// read (cross-origin, foreign Host, no credentials, Authorize says no, a
// body too large or too slow) is answered at once and costs no reading.
// (HTTP/1 only: an HTTP/2 stream holds no connection, and a past deadline
// would reset it before its answer is out.)
//
// replaceable says a middleware between here and bodyCap (an auth
// strategy's, a plugin's) may hand on another body: the capped one then
// travels in the request's context too, so bodyCap still sees that it met
// the cap. Without such middleware bodyCap finds it as the request's body,
// and the request is not copied for a context value.
func bodyClock(max int64, timeout time.Duration, replaceable bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			tooLarge(w)
			return
		}
		if r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		if r.ProtoMajor == 1 {
			// (On HTTP/2 a Connection: close would send a GOAWAY that
			// ends the connection's other streams too; an unread stream
			// body is the stream's alone.)
			w.Header().Set("Connection", "close")
		}
		rc := http.NewResponseController(w)
		capped := &cappedBody{body: r.Body, max: max, left: max, rc: rc}
		if replaceable {
			r = r.WithContext(context.WithValue(r.Context(), cappedBodyKey{}, capped))
		}
		r.Body = capped
		if rc.SetReadDeadline(time.Now().Add(timeout)) == nil && r.ProtoMajor == 1 {
			defer func() {
				if w.Header().Get("Connection") == "close" {
					_ = rc.SetReadDeadline(time.Now())
				}
			}()
		}
		next.ServeHTTP(w, r)
	})
}

// cappedBody is the request body bodyClock hands on. Like
// http.MaxBytesReader it reads at most max bytes of the body and then fails
// with *http.MaxBytesError; it also remembers that it did, so that bodyCap
// answers 413 even when a plugin middleware read the body, met the cap and
// handed on what it had read.
type cappedBody struct {
	body      io.ReadCloser
	max, left int64
	over      atomic.Bool
	rc        *http.ResponseController // sets the body's read deadline (grpcBody lifts it)
}

type cappedBodyKey struct{}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.over.Load() {
		return 0, &http.MaxBytesError{Limit: c.max}
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1] // one byte past the cap tells a body at the cap from one over it
	}
	n, err := c.body.Read(p)
	if int64(n) <= c.left {
		c.left -= int64(n)
		return n, err
	}
	c.over.Store(true)
	n, c.left = int(c.left), 0
	return n, &http.MaxBytesError{Limit: c.max}
}

func (c *cappedBody) Close() error { return c.body.Close() }

// receivedBody is an admitted body, read whole.
type receivedBody struct{ bytes.Reader }

func (*receivedBody) Close() error { return nil }

// bodyCap reads a request's whole body before the handler runs, once the
// guards admitted the request: up to max bytes (413 over it), before
// bodyClock's deadline (408 REQUEST_TIMEOUT past it, and the connection
// closes). The handler gets a body known to fit and already received, so a
// streaming route never turns a 200 into a 413 halfway. Reading the body's
// end lifts the deadline (net/http clears it when it starts watching the
// connection for the client going away), so a response may stream for
// long. Memory grows with the bytes that arrive, not with the declared
// length.
func bodyCap(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			capped, ok := r.Body.(*cappedBody)
			if !ok {
				capped, ok = r.Context().Value(cappedBodyKey{}).(*cappedBody)
			}
			data, err := readAtMost(r.Body, max+1, r.ContentLength)
			if err == nil && (int64(len(data)) > max || ok && capped.over.Load()) {
				err = &http.MaxBytesError{Limit: max}
			}
			if err != nil {
				refuseBody(w, err) // closes the connection: bodyClock ends its reading
				return
			}
			body := &receivedBody{}
			body.Reset(data)
			r.Body, r.ContentLength = body, int64(len(data))
		}
		// Admitted: the connection may be kept alive after all.
		w.Header().Del("Connection")
		next.ServeHTTP(w, r)
	})
}

// readAtMost reads body to its end or to limit bytes, whichever comes
// first, as io.ReadAll(io.LimitReader(body, limit)) does, into a buffer
// sized for the declared length (when there is one under the limit)
// instead of ReadAll's 512 bytes grown by doubling: a run's body is a few
// dozen bytes.
func readAtMost(body io.Reader, limit, declared int64) ([]byte, error) {
	size := int64(512)
	if declared >= 0 {
		size = declared + 1 // room for the read that finds the end
	}
	data := make([]byte, 0, min(size, limit))
	for int64(len(data)) < limit {
		if len(data) == cap(data) {
			data = slices.Grow(data, int(min(int64(cap(data)), limit-int64(len(data)))))
		}
		n, err := body.Read(data[len(data):min(cap(data), int(limit))])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return data, err
		}
	}
	return data, nil
}

// refuseBody answers a body that could not be read whole, and closes the
// connection: the rest of the body, if any, is still on the wire.
func refuseBody(w http.ResponseWriter, err error) {
	var tooBig *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &tooBig):
		tooLarge(w)
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestTimeout, core.CodeRequestTimeout, "the request body was not received in time")
	default:
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusBadRequest, core.CodeBadRequest, "the request body could not be read")
	}
}

func tooLarge(w http.ResponseWriter) {
	// The unread body stays on the wire: close the connection after the
	// answer rather than read it.
	w.Header().Set("Connection", "close")
	writeError(w, http.StatusRequestEntityTooLarge, core.CodeBodyTooLarge, "request body too large")
}
