package httpstream_test

import (
	"net/http"
	"sync/atomic"
	"testing"
)

// flushCounter counts the flushes a handler makes: each is one write to
// the connection.
type flushCounter struct {
	http.ResponseWriter
	n *atomic.Int32
}

func (f flushCounter) Flush() {
	f.n.Add(1)
	if fl, ok := f.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

func (f flushCounter) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// A run's stream goes out one write per frame: the status line and headers
// travel with the first frame, not in a write of their own.
func TestARunIsOneWritePerFrame(t *testing.T) {
	for _, accept := range []string{"application/x-ndjson", "text/event-stream"} {
		t.Run(accept, func(t *testing.T) {
			var flushes atomic.Int32
			e := newEnv(t, setup{middleware: []func(http.Handler) http.Handler{func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					next.ServeHTTP(flushCounter{w, &flushes}, r)
				})
			}}})
			s := e.open(t, http.MethodPost, "/agents/writer/run", `{"input":"hi"}`, "Accept", accept)
			frames := s.rest()
			s.close()
			if len(frames) == 0 {
				t.Fatal("no frames")
			}
			if got := int(flushes.Load()); got != len(frames) {
				t.Errorf("%d frames took %d writes, want one each", len(frames), got)
			}
		})
	}
}
