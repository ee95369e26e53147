package enginetest_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/engine"
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
// travel with the first frame, not in a write of their own, and the last
// frame with the response's end.
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
			if got := int(flushes.Load()); got != len(frames)-1 {
				t.Errorf("%d frames took %d flushes, want one each but the last", len(frames), got)
			}
		})
	}
}

// slowLog is the memory store with a crumb log whose writes take a while,
// as a remote database's would.
type slowLog struct {
	*memory.Store
	delay time.Duration
}

func (s slowLog) AppendCrumbs(ctx context.Context, entries []core.CrumbLogEntry) error {
	time.Sleep(s.delay)
	return s.Store.AppendCrumbs(ctx, entries)
}

// AppendsInline reports false: the wrapper adds latency or faults to the
// memory store's writes, so they go through the engine's writer goroutine.
func (s slowLog) AppendsInline() bool { return false }

// The frame that ends a run reaches the client only once the run's crumb
// log is stored: a client that reads agent:run:end and at once reads the
// run's log finds the whole run there, however slow the store.
func TestARunsEndArrivesAfterItsLogIsStored(t *testing.T) {
	for _, accept := range []string{"application/x-ndjson", "text/event-stream"} {
		t.Run(accept, func(t *testing.T) {
			store := slowLog{Store: memory.New(), delay: 50 * time.Millisecond}
			e := newEnv(t, setup{cfg: engine.Config{Store: store}})
			s := e.open(t, http.MethodPost, "/agents/writer/run", `{"input":"hi"}`, "Accept", accept)
			var runID string
			for {
				f, ok := s.next()
				if !ok {
					t.Fatal("the stream ended without agent:run:end")
				}
				if f.Crumb.CrumbType() == core.TypeAgentRunStart {
					runID = f.RunID
				}
				if f.Crumb.CrumbType() == core.TypeAgentRunEnd {
					break
				}
			}
			entries, err := store.GetCrumbs(context.Background(), runID, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(entries); n == 0 || entries[n-1].Type != core.TypeAgentRunEnd {
				t.Fatalf("when the client read agent:run:end the log held %d entries, the last %v; want it to end with agent:run:end", n, entries)
			}
			s.close()
		})
	}
}
