package enginetest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/server"
	"github.com/breadai/bread/transports/httpstream"
)

// fixture is a started instance on a memory store with one scripted agent.
type fixture struct {
	inst  *engine.Instance
	store *memory.Store
	model *modeltest.Model
}

func newFixture(t *testing.T, cfg engine.Config, turns ...modeltest.Turn) *fixture {
	t.Helper()
	if len(turns) == 0 {
		turns = []modeltest.Turn{modeltest.Text("hello")}
	}
	f := &fixture{store: memory.New(), model: modeltest.New(turns...)}
	if cfg.Store == nil {
		cfg.Store = f.store
	}
	cfg.Providers = f.model.Registry("scripted")
	cfg.Agents = append(cfg.Agents,
		&core.Agent{ID: "writer", Model: core.ModelRef{Provider: "scripted", Model: "m1"}, Output: core.OutputFormat{Format: core.FormatMarkdown}},
		&core.Agent{ID: "analyst", Model: core.ModelRef{Provider: "scripted", Model: "m2"}},
	)
	inst, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inst.Stop(context.Background()) })
	f.inst = inst
	return f
}

// serve starts a real socket for the server's handler.
func (f *fixture) serve(t *testing.T, opts server.Options) *httptest.Server {
	t.Helper()
	srv, err := server.New(f.inst, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) errorCode(t *testing.T) string {
	t.Helper()
	var b struct {
		Error core.ClientError `json:"error"`
	}
	if err := json.Unmarshal(r.body, &b); err != nil {
		t.Fatalf("body %q is not an error object: %v", r.body, err)
	}
	if b.Error.Message == "" {
		t.Fatalf("error without a message: %s", r.body)
	}
	return b.Error.Code
}

func (r reply) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %q: %v", r.body, err)
	}
}

// do sends one request; hdr pairs are header name, value ("Host" sets the
// Host header).
func do(t *testing.T, base, method, path, body string, hdr ...string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{status: res.StatusCode, header: res.Header, body: b}
}

// headerAuth trusts X-Identity as the caller's subject: a test double.
type headerAuth struct{}

func (headerAuth) Name() string { return "header" }
func (headerAuth) Authenticate(r *http.Request) (*core.AuthIdentity, error) {
	if s := r.Header.Get("X-Identity"); s != "" {
		return &core.AuthIdentity{Subject: s}, nil
	}
	return nil, nil
}

// allowStreams is the stream options of a server whose AuthorizeStream is
// allow.
func allowStreams(allow func(id *core.AuthIdentity, runID string) bool) httpstream.Options {
	return httpstream.Options{AuthorizeStream: func(_ context.Context, id *core.AuthIdentity, runID string) bool { return allow(id, runID) }}
}

// aheadClock is an engine.Clock ahead of the real time by what later added:
// a claim or a lease lapses when the test says, not after a sleep.
type aheadClock struct{ ahead atomic.Int64 }

func (c *aheadClock) later(d time.Duration) { c.ahead.Add(int64(d)) }

func (c *aheadClock) Now() time.Time { return time.Now().Add(time.Duration(c.ahead.Load())) }

func (c *aheadClock) NewTimer(d time.Duration) engine.Timer { return engine.RealClock().NewTimer(d) }

func (c *aheadClock) NewTicker(d time.Duration) engine.Ticker {
	return engine.RealClock().NewTicker(d)
}
