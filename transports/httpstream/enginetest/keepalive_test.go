package enginetest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/transports/httpstream"
	"github.com/breadai/bread/transports/httpstream/streamtest"
)

// writes is a ResponseWriter that records what each flush sent, and when.
type writes struct {
	mu      sync.Mutex
	header  http.Header
	pending []byte
	sent    []string
	at      []time.Time
}

func (w *writes) Header() http.Header { return w.header }
func (w *writes) WriteHeader(int)     {}
func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = append(w.pending, p...)
	return len(p), nil
}
func (w *writes) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) > 0 {
		w.sent, w.at = append(w.sent, string(w.pending)), append(w.at, time.Now())
		w.pending = w.pending[:0]
	}
}

// TestARunsStreamKeepsAliveWhileTheModelIsSilent: a run whose model says
// nothing for 50 s keeps its stream alive with the format's heartbeat (a
// blank line in NDJSON, ": ping" in SSE), never silent longer than the
// heartbeat interval, in a synctest bubble (fake time).
func TestARunsStreamKeepsAliveWhileTheModelIsSilent(t *testing.T) {
	for _, c := range []struct{ accept, beat string }{
		{httpstream.ContentTypeNDJSON, "\n"},
		{httpstream.ContentTypeSSE, ": ping\n\n"},
	} {
		t.Run(c.accept, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const every = 15 * time.Second
				reached := make(chan struct{})
				model := modeltest.New(modeltest.Block(reached))
				inst, err := engine.New(engine.Config{Store: memory.New(), Providers: model.Registry("scripted"),
					Agents: []*core.Agent{{ID: "writer", Model: core.ModelRef{Provider: "scripted", Model: "m"}}}})
				if err != nil {
					t.Fatal(err)
				}
				if err := inst.Start(t.Context()); err != nil {
					t.Fatal(err)
				}
				defer inst.Stop(context.Background())
				r := streamtest.NewRouter()
				httpstream.New(httpstream.Options{Heartbeat: every}).Mount(r, inst)
				ctx, leave := context.WithCancel(t.Context())
				req := httptest.NewRequestWithContext(ctx, "POST", "/agents/writer/run", strings.NewReader(`{"input":"hi"}`))
				req.Header.Set("Accept", c.accept)
				w := &writes{header: http.Header{}}
				began := time.Now()
				done := make(chan struct{})
				go func() {
					defer close(done)
					r.ServeHTTP(w, req)
				}()
				<-reached
				time.Sleep(50 * time.Second)
				synctest.Wait()
				w.mu.Lock()
				sent, at := append([]string(nil), w.sent...), append([]time.Time(nil), w.at...)
				w.mu.Unlock()
				beats := 0
				last := began
				for i, s := range sent {
					if s == c.beat {
						beats++
					}
					if gap := at[i].Sub(last); gap > every {
						t.Errorf("a silence of %v with a heartbeat of %v", gap, every)
					}
					last = at[i]
				}
				if gap := time.Since(last); gap > every {
					t.Errorf("silent for the last %v", gap)
				}
				if beats < 3 {
					t.Fatalf("%d heartbeats in 50 s of silence: %q", beats, sent)
				}
				leave()
				<-done
				n := len(w.sent)
				time.Sleep(time.Minute)
				if len(w.sent) != n {
					t.Fatalf("a heartbeat after the stream ended: %q", w.sent[n:])
				}
			})
		})
	}
}
