package streamtest

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/breadai/bread/core"
)

// ErrCut is what a cut response body returns: the connection dropped.
var ErrCut = errors.New("streamtest: connection cut by the test")

// Cutter is an http.RoundTripper for a remote-agent client under test: it
// lets the test drop the client's open stream at a moment it picks, and
// can send the reconnects (GET /runs/{id}/stream) to another server, as a
// load balancer would to another replica.
type Cutter struct {
	// Base sends the requests; nil is http.DefaultTransport.
	Base http.RoundTripper
	// TailURL, when set, is where the passive stream requests go (scheme
	// and host, for example another replica's httptest URL).
	TailURL string

	mu    sync.Mutex
	cur   *cutBody
	tails atomic.Int64
}

// RoundTrip sends req and wraps a streamed response's body so Cut can drop it.
func (c *Cutter) RoundTrip(req *http.Request) (*http.Response, error) {
	base := c.Base
	if base == nil {
		base = http.DefaultTransport
	}
	tail := req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/stream")
	if tail {
		c.tails.Add(1)
		if c.TailURL != "" {
			req = req.Clone(req.Context())
			host := strings.TrimPrefix(strings.TrimPrefix(c.TailURL, "http://"), "https://")
			req.URL.Host, req.Host = host, host
		}
	}
	res, err := base.RoundTrip(req)
	if err != nil || !(tail || strings.HasSuffix(req.URL.Path, "/run")) {
		return res, err
	}
	b := &cutBody{rc: res.Body}
	res.Body = b
	c.mu.Lock()
	c.cur = b
	c.mu.Unlock()
	return res, nil
}

// Cut drops the stream the client reads now, unless it is cut already
// (the client has not reconnected yet): it reports whether it cut.
func (c *Cutter) Cut() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == nil || c.cur.cut.Load() {
		return false
	}
	c.cur.cut.Store(true)
	return true
}

// Tails is how many passive stream requests (reconnects) were sent.
func (c *Cutter) Tails() int { return int(c.tails.Load()) }

type cutBody struct {
	rc  io.ReadCloser
	cut atomic.Bool
}

// cutRead bounds one read of a cuttable body, so that what a client has
// buffered when the test cuts is at most one frame and this much.
const cutRead = 512

func (b *cutBody) Read(p []byte) (int, error) {
	if b.cut.Load() {
		return 0, ErrCut
	}
	if len(p) > cutRead {
		p = p[:cutRead]
	}
	return b.rc.Read(p)
}

func (b *cutBody) Close() error { return b.rc.Close() }

// Relayed is what a remote-agent client relayed of a LongRun.
type Relayed struct {
	Text    string     // the text deltas, concatenated
	Durable []string   // the types of the other crumbs, in order
	Last    core.Crumb // the last crumb
	Err     error      // the last error yielded
	Points  int        // cut points the text passed before the run ended
	Cuts    int        // connections the test cut
	Deltas  int        // text deltas yielded
}

// RelayWithCuts runs agentID through a remote-agent client whose requests
// go through cutter, feeding run's pacing with every delta it yields and
// cutting the client's connection each time the text passes one of cuts
// (bytes, ascending), until the run ends. Every cut is followed by a
// reconnect (Cutter.Tails) unless the run ended in what the client had
// buffered.
func RelayWithCuts(t testing.TB, agent core.RemoteAgent, agentID string, run *LongRun, cutter *Cutter, cuts []int) Relayed {
	t.Helper()
	var out Relayed
	var text strings.Builder
	for c, err := range agent.Run(t.Context(), agentID, "hi", core.RunOptions{}) {
		if err != nil {
			out.Err = err
		}
		if c == nil {
			continue
		}
		out.Last = c
		d, ok := c.(*core.TextDelta)
		if !ok {
			out.Durable = append(out.Durable, c.CrumbType())
			continue
		}
		out.Deltas++
		text.WriteString(d.Delta)
		run.Saw(d.Delta)
		// Points passed while the connection is cut already wait for the
		// next one, which is cut at its first delta; points that one
		// delta passes (an aggregated window replayed from the log) are
		// one drop.
		if len(cuts) > 0 && text.Len() >= cuts[0] && cutter.Cut() {
			out.Cuts++
			for len(cuts) > 0 && text.Len() >= cuts[0] {
				cuts = cuts[1:]
				out.Points++
			}
		}
	}
	out.Text = text.String()
	return out
}
