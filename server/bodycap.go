package server

import (
	"bytes"
	"io"
	"net/http"

	"github.com/breadai/bread/core"
)

// bodyCap refuses bodies over max with 413 before any middleware or route
// sees them. A declared Content-Length is checked up front; a body of
// unknown length (chunked) is read up to max+1 bytes here, so the route
// gets a body that is known to fit and a streaming route never has to turn
// a 200 into a 413 halfway.
func bodyCap(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.ContentLength > max:
			tooLarge(w)
			return
		case r.ContentLength < 0:
			data, err := io.ReadAll(io.LimitReader(r.Body, max+1))
			if err != nil {
				badRequest(w, "the request body could not be read")
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
		next.ServeHTTP(w, r)
	})
}

func tooLarge(w http.ResponseWriter) {
	// The unread body stays on the wire: close the connection after the
	// answer rather than read it.
	w.Header().Set("Connection", "close")
	writeError(w, http.StatusRequestEntityTooLarge, core.CodeBodyTooLarge, "request body too large")
}
