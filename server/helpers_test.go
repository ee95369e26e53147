package server_test

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
	"github.com/breadai/bread/server"
	"github.com/breadai/bread/transports/httpstream"
)

// fixture is a fake engine (fake_engine_test.go) on a memory store with
// two agents, writer and analyst. The server's tests with the real engine
// are in the module server/enginetest.
type fixture struct {
	inst  *fakeEngine
	store *memory.Store
	ahead atomic.Int64 // how far the store's clock is ahead of the real time
}

func newFixture(t *testing.T, cfg fakeConfig) *fixture {
	t.Helper()
	f := &fixture{}
	f.store = memory.NewWithOptions(memory.Options{Now: func() time.Time { return time.Now().Add(time.Duration(f.ahead.Load())) }})
	if cfg.Store == nil {
		cfg.Store = f.store
	}
	cfg.Agents = append(cfg.Agents,
		&core.Agent{ID: "writer", Model: core.ModelRef{Provider: "scripted", Model: "m1"}, Output: core.OutputFormat{Format: core.FormatMarkdown}},
		&core.Agent{ID: "analyst", Model: core.ModelRef{Provider: "scripted", Model: "m2"}},
	)
	f.inst = newFakeEngine(cfg)
	t.Cleanup(func() { _ = f.inst.Stop(context.Background()) })
	return f
}

// later moves the store's clock on by d, as if d had passed: its sessions
// are that much older.
func (f *fixture) later(d time.Duration) { f.ahead.Add(int64(d)) }

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
	return doRequest(t, req, hdr...)
}

// doRequest sends req with the header pairs added ("Host" sets the Host
// header) and reads the whole answer.
func doRequest(t *testing.T, req *http.Request, hdr ...string) reply {
	t.Helper()
	setHeaders(req, hdr...)
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

// setHeaders sets the header pairs given on req ("Host" sets req.Host).
func setHeaders(req *http.Request, hdr ...string) {
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
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

func newFixtureStore() *memory.Store { return memory.New() }

// allowStreams is the stream options of a server whose AuthorizeStream is
// allow.
func allowStreams(allow func(id *core.AuthIdentity, runID string) bool) httpstream.Options {
	return httpstream.Options{AuthorizeStream: func(_ context.Context, id *core.AuthIdentity, runID string) bool { return allow(id, runID) }}
}
