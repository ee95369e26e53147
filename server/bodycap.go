package server

import (
	"bytes"
	"io"
	"net/http"
	"time"

	"github.com/breadai/bread/core"
)

// bodyCap refuses bodies over max with 413 before any route sees them. A
// declared Content-Length is checked up front; a body of unknown length
// (chunked) is read up to max+1 bytes here, within readTimeout, so the
// route gets a body that is known to fit and a streaming route never has
// to turn a 200 into a 413 halfway. It runs after the Host guard and auth.
func bodyCap(max int64, readTimeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.ContentLength > max:
			tooLarge(w)
			return
		case r.ContentLength < 0:
			rc := http.NewResponseController(w)
			_ = rc.SetReadDeadline(time.Now().Add(readTimeout))
			data, err := io.ReadAll(io.LimitReader(r.Body, max+1))
			_ = rc.SetReadDeadline(time.Time{}) // the route may stream for long
			if err != nil {
				w.Header().Set("Connection", "close")
				writeError(w, http.StatusRequestTimeout, core.CodeBadRequest, "the request body was not received in time")
				return
			}
			if int64(len(data)) > max {
				tooLarge(w)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(data))
			r.ContentLength = int64(len(data))
		default:
			r.Body = http.MaxBytesReader(w, r.Body, max)
		}
		// Admitted: the connection may be kept alive after all.
		w.Header().Del("Connection")
		next.ServeHTTP(w, r)
	})
}

// declaredCap refuses a request whose Content-Length is over max, without
// reading anything.
func declaredCap(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			tooLarge(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// closeUnlessAdmitted marks every response to a request with a body as the
// connection's last, until bodyCap admits the body: a request refused
// before that (foreign Host, no credentials, Authorize says no, no route)
// is answered at once, and net/http does not first try to drain its body
// (up to 256 KiB, at the client's pace) to keep the connection alive.
func closeUnlessAdmitted(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

func tooLarge(w http.ResponseWriter) {
	// The unread body stays on the wire: close the connection after the
	// answer rather than read it.
	w.Header().Set("Connection", "close")
	writeError(w, http.StatusRequestEntityTooLarge, core.CodeBodyTooLarge, "request body too large")
}
