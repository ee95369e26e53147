package server_test

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server"
)

func health(t *testing.T, r reply) server.HealthBody {
	t.Helper()
	var b server.HealthBody
	r.decode(t, &b)
	return b
}

func failing(b server.HealthBody) []string {
	var out []string
	for _, c := range b.Checks {
		if !c.OK {
			out = append(out, c.Name)
		}
	}
	return out
}

// /healthz answers while serving; /readyz runs the store ping, the
// instance's lifecycle, the server's drain and Options.Checks, and turns 503
// naming the failing check.
func TestHealthAndReadiness(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	var down error
	ts := f.serve(t, server.Options{Checks: []server.Check{{Name: "extra", Check: func(context.Context) error { return down }}},
		ReadyTimeout: 200 * time.Millisecond})

	if r := do(t, ts.URL, "GET", "/healthz", ""); r.status != 200 || health(t, r).Status != "ok" {
		t.Fatalf("/healthz = %d %s", r.status, r.body)
	}
	r := do(t, ts.URL, "GET", "/readyz", "")
	if r.status != 200 {
		t.Fatalf("/readyz = %d %s", r.status, r.body)
	}
	names := map[string]bool{}
	for _, c := range health(t, r).Checks {
		names[c.Name] = true
	}
	for _, want := range []string{"draining", "instance", "store", "extra"} {
		if !names[want] {
			t.Errorf("/readyz lists no %q check: %s", want, r.body)
		}
	}

	down = &core.BreadError{Code: core.CodeStoreUnavailable, Message: "down"}
	if r := do(t, ts.URL, "GET", "/readyz", ""); r.status != 503 || strings.Join(failing(health(t, r)), ",") != "extra" {
		t.Fatalf("/readyz with a failing check = %d %s", r.status, r.body)
	}
	down = nil

	f.store.Close()
	if r := do(t, ts.URL, "GET", "/readyz", ""); r.status != 503 || strings.Join(failing(health(t, r)), ",") != "store" {
		t.Fatalf("/readyz with a closed store = %d %s", r.status, r.body)
	}
	if r := do(t, ts.URL, "GET", "/healthz", ""); r.status != 200 {
		t.Fatalf("/healthz must not depend on the store: %d", r.status)
	}
	_ = f.inst.Stop(context.Background())
	if r := do(t, ts.URL, "GET", "/readyz", ""); r.status != 503 || !strings.Contains(strings.Join(failing(health(t, r)), ","), "instance") {
		t.Fatalf("/readyz on a stopped instance = %d %s", r.status, r.body)
	}
}

// A check that ignores its context is cut at ReadyTimeout.
func TestReadinessDeadline(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	block := make(chan struct{})
	defer close(block)
	ts := f.serve(t, server.Options{ReadyTimeout: 100 * time.Millisecond,
		Checks: []server.Check{{Name: "slow", Check: func(context.Context) error { <-block; return nil }}}})
	start := time.Now()
	r := do(t, ts.URL, "GET", "/readyz", "")
	if r.status != 503 || failing(health(t, r))[0] != "slow" {
		t.Fatalf("/readyz = %d %s", r.status, r.body)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("/readyz took %v", d)
	}
}

// Public actions pass the Host guard (auth off) and skip authentication and
// authorization (auth on); nothing else does.
func TestPublicActions(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	guarded := f.serve(t, server.Options{})
	if r := do(t, guarded.URL, "GET", "/healthz", "", "Host", "10.0.0.7:3000"); r.status != 403 {
		t.Fatalf("/healthz without Public past the Host guard = %d", r.status)
	}
	open := f.serve(t, server.Options{Public: []string{core.ActionHealthLive, core.ActionHealthReady}})
	for _, p := range []string{"/healthz", "/readyz"} {
		if r := do(t, open.URL, "GET", p, "", "Host", "10.0.0.7:3000"); r.status != 200 {
			t.Fatalf("public %s from a pod address = %d %s", p, r.status, r.body)
		}
	}
	if r := do(t, open.URL, "GET", "/agents", "", "Host", "10.0.0.7:3000"); r.status != 403 {
		t.Fatalf("/agents is not public: %d", r.status)
	}
	if r := do(t, open.URL, "POST", "/healthz", "", "Host", "10.0.0.7:3000"); r.status != 403 {
		t.Fatalf("a method the public route does not serve goes through the guard: %d", r.status)
	}

	var calls []string
	authed := f.serve(t, server.Options{Public: []string{core.ActionHealthReady},
		Auth: &server.Auth{Strategies: []core.BreadAuthStrategy{headerAuth{}}, Authorize: allowList(&calls)}})
	if r := do(t, authed.URL, "GET", "/readyz", ""); r.status != 200 {
		t.Fatalf("public /readyz with auth on = %d %s", r.status, r.body)
	}
	if r := do(t, authed.URL, "GET", "/healthz", ""); r.status != 401 {
		t.Fatalf("/healthz not public with auth on = %d", r.status)
	}
	if len(calls) != 0 {
		t.Fatalf("Authorize was asked about a public route: %v", calls)
	}
}

// Drain turns readiness false, refuses new runs with 503 INSTANCE_STOPPING
// and Retry-After, lets the running stream go on, and returns when it ends.
func TestDrain(t *testing.T) {
	reached := make(chan struct{})
	f := newFixture(t, fakeConfig{Block: reached})
	srv, err := server.New(f.inst, server.Options{RetryAfter: 7 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ts := newSocket(t, srv)

	req, _ := http.NewRequest("POST", ts+"/agents/writer/run", strings.NewReader(`{"input":"hi"}`))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	<-reached

	// A drain whose context has ended while a run goes on turns the
	// server draining and says the run did not end.
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if err := srv.Drain(ended); !errors.Is(err, context.Canceled) {
		t.Fatalf("Drain with a run still going = %v", err)
	}
	if !srv.Draining() {
		t.Fatal("Drain did not turn the server draining")
	}

	if r := do(t, ts, "GET", "/readyz", ""); r.status != 503 || failing(health(t, r))[0] != "draining" {
		t.Fatalf("/readyz while draining = %d %s", r.status, r.body)
	}
	r := do(t, ts, "POST", "/agents/writer/run", `{"input":"again"}`)
	if r.status != 503 || r.errorCode(t) != core.CodeInstanceStopping || r.header.Get("Retry-After") != "7" {
		t.Fatalf("a run while draining = %d %v %s", r.status, r.header, r.body)
	}
	if r := do(t, ts, "GET", "/agents", ""); r.status != 200 {
		t.Fatalf("reads keep serving while draining: %d", r.status)
	}
	// The instance's Stop cancels the blocked run, ending the stream with
	// a terminal frame.
	_ = f.inst.Stop(context.Background())
	var last string
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		last = sc.Text()
	}
	if !strings.Contains(last, `"agent:error"`) || !strings.Contains(last, core.CodeRunCancelled) {
		t.Fatalf("the drained stream ended with %s", last)
	}
	if err := srv.Drain(context.Background()); err != nil {
		t.Fatalf("Drain with nothing in flight = %v", err)
	}
}

func newSocket(t *testing.T, srv *server.Server) string {
	t.Helper()
	ts := httptestServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts.URL
}

func httptestServer(h http.Handler) *httptest.Server { return httptest.NewServer(h) }

// A public route skips an auth plugin (server.AuthPlugin) as it skips
// Options.Auth; other plugin middleware still wraps it.
func TestPublicActionsSkipTheAuthPlugin(t *testing.T) {
	var calls []string
	f := newFixture(t, fakeConfig{Plugins: []core.BreadPlugin{server.AuthPlugin(headerAuth{})}})
	ts := f.serve(t, server.Options{Public: []string{core.ActionHealthLive}, Auth: &server.Auth{Authorize: allowList(&calls)}})
	if r := do(t, ts.URL, "GET", "/healthz", ""); r.status != 200 {
		t.Fatalf("public /healthz behind the auth plugin = %d %s", r.status, r.body)
	}
	if r := do(t, ts.URL, "GET", "/readyz", ""); r.status != 401 {
		t.Fatalf("/readyz is not public: %d", r.status)
	}
}
