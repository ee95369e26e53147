package server_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server"
)

// watchPlugin counts the requests its middleware and its route see.
type watchPlugin struct {
	middleware, route *atomic.Int32
}

func (watchPlugin) Name() string { return "watch" }
func (p watchPlugin) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.middleware.Add(1)
		next.ServeHTTP(w, r)
	})
}
func (p watchPlugin) Routes(r core.Router) {
	r.Handle("watch.post", http.MethodPost, "/watch", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		p.route.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
}

// A browser on a page of another origin: what Chromium sends for a
// fetch(url, {method: "POST", mode: "no-cors", body: "..."}) from
// https://evil.example, which needs no preflight.
var evilBrowser = []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors", "Content-Type", "text/plain;charset=UTF-8"}

// TestCrossSiteRequestsAreRefused: with no auth on loopback (the default),
// a cross-site "simple" request is 403 with the seed's body before any
// middleware or route runs: no run starts, no session is deleted.
func TestCrossSiteRequestsAreRefused(t *testing.T) {
	var mw, route atomic.Int32
	f := newFixture(t, fakeConfig{Plugins: []core.BreadPlugin{watchPlugin{&mw, &route}}})
	ts := f.serve(t, server.Options{})
	if _, err := f.store.CreateSession(context.Background(), core.NewSession{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	// The cleanup below deletes sessions older than about 1 ms: let s1 be
	// an hour old, so that only the guard can keep it.
	f.later(time.Hour)

	for _, c := range []struct{ method, path, body string }{
		{"POST", "/agents/writer/run", `{"input":"hi"}`},
		{"POST", "/pipelines/p/run", `{"input":"hi"}`},
		{"POST", "/resume/cp1", `{"response":true}`},
		{"POST", "/sessions/cleanup", `{"olderThanDays":0.00000001}`},
		{"DELETE", "/sessions/s1", ""},
		{"POST", "/runs/r1/cancel", ""},
		{"POST", "/agents/writer/evals", ""},
		{"POST", "/watch", "x"},
		{"POST", "/no/such/path", "x"},
	} {
		r := do(t, ts.URL, c.method, c.path, c.body, evilBrowser...)
		if r.status != http.StatusForbidden || string(r.body) != server.ForbiddenBody || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("cross-site %s %s = %d %q %v, want 403 %s", c.method, c.path, r.status, r.body, r.header, server.ForbiddenBody)
		}
		// A browser too old to send Sec-Fetch-Site is judged by Origin
		// against Host.
		r = do(t, ts.URL, c.method, c.path, c.body, "Origin", "https://evil.example", "Content-Type", "text/plain")
		if r.status != http.StatusForbidden || string(r.body) != server.ForbiddenBody {
			t.Errorf("cross-origin (Origin only) %s %s = %d %q", c.method, c.path, r.status, r.body)
		}
	}
	if n := f.inst.Runs(); n != 0 {
		t.Errorf("refused requests started %d runs", n)
	}
	if mw.Load() != 0 || route.Load() != 0 {
		t.Errorf("plugin middleware ran %d times, its route %d times, for refused requests", mw.Load(), route.Load())
	}
	// Same-site is not same-origin: a page on another port of the same
	// host is another origin.
	if r := do(t, ts.URL, "POST", "/watch", "x", "Origin", "http://localhost:5173", "Sec-Fetch-Site", "same-site"); r.status != http.StatusForbidden {
		t.Errorf("same-site POST = %d, want 403", r.status)
	}
	// Safe methods are not refused: a page can make a browser send a GET
	// but cannot read its answer without CORS.
	if r := do(t, ts.URL, "GET", "/sessions/s1", "", evilBrowser...); r.status != http.StatusOK || r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("cross-site GET = %d %v, want 200 without CORS headers", r.status, r.header)
	}
	if r := do(t, ts.URL, "GET", "/sessions/s1", ""); r.status != http.StatusOK {
		t.Fatalf("the session is gone after refused requests: %d %s", r.status, r.body)
	}
	// The same cleanup from curl deletes it: the guard is what kept it.
	if r := do(t, ts.URL, "POST", "/sessions/cleanup", `{"olderThanDays":0.00000001}`, "Content-Type", "text/plain"); string(r.body) != `{"deleted":1}`+"\n" {
		t.Fatalf("cleanup without browser headers = %d %s", r.status, r.body)
	}
}

// TestClientsThatAreNotBrowsersAndSameOriginPagesPass: curl, SDKs and the
// remote-agent clients send neither Sec-Fetch-Site nor Origin, and need no
// particular Content-Type; the console is a same-origin page.
func TestClientsThatAreNotBrowsersAndSameOriginPagesPass(t *testing.T) {
	var mw, route atomic.Int32
	f := newFixture(t, fakeConfig{Plugins: []core.BreadPlugin{watchPlugin{&mw, &route}}})
	ts := f.serve(t, server.Options{})
	host := ts.Listener.Addr().String()
	for _, hdr := range [][]string{
		nil,                                  // curl, an SDK
		{"Content-Type", "text/plain"},       // any Content-Type
		{"Content-Type", "application/json"}, // the remote-agent clients
		{"Origin", ts.URL, "Sec-Fetch-Site", "same-origin", "Content-Type", "application/json"}, // the console
		{"Origin", ts.URL}, // a same-origin page of a browser without Sec-Fetch-Site
		{"Origin", "https://evil.example", "Sec-Fetch-Site", "none"}, // the user's own action (a bookmark)
	} {
		if r := do(t, ts.URL, "POST", "/watch", "x", hdr...); r.status != http.StatusNoContent {
			t.Errorf("POST /watch with %v = %d %s, want 204", hdr, r.status, r.body)
		}
	}
	if got := route.Load(); got != 6 {
		t.Errorf("the route ran %d times, want 6", got)
	}
	r := do(t, ts.URL, "POST", "/agents/writer/run", `{"input":"hi"}`, "Origin", "http://"+host, "Sec-Fetch-Site", "same-origin", "Content-Type", "text/plain;charset=UTF-8")
	if r.status != http.StatusOK || !contains(r.body, "agent:run:end") {
		t.Fatalf("a same-origin run = %d %s", r.status, r.body)
	}
}

// TestCrossOriginTrustAndOptOut: the CORS origins are trusted ("*" is not a
// trust in every origin), and AllowCrossOrigin turns the guard off.
func TestCrossOriginTrustAndOptOut(t *testing.T) {
	var mw, route atomic.Int32
	f := newFixture(t, fakeConfig{Plugins: []core.BreadPlugin{watchPlugin{&mw, &route}}})
	post := func(ts string, origin string) int {
		return do(t, ts, "POST", "/watch", "x", "Origin", origin, "Sec-Fetch-Site", "cross-site", "Content-Type", "text/plain").status
	}
	trusted := f.serve(t, server.Options{CORS: server.CORS{Origins: []string{"https://app.example", "*"}}})
	if got := post(trusted.URL, "https://app.example"); got != http.StatusNoContent {
		t.Errorf("a CORS origin = %d, want 204", got)
	}
	if got := post(trusted.URL, "https://evil.example"); got != http.StatusForbidden {
		t.Errorf("another origin, with \"*\" among the CORS origins = %d, want 403", got)
	}
	open := f.serve(t, server.Options{AllowCrossOrigin: true})
	if got := post(open.URL, "https://evil.example"); got != http.StatusNoContent {
		t.Errorf("with AllowCrossOrigin = %d, want 204", got)
	}
	if _, err := server.New(f.inst, server.Options{CORS: server.CORS{Origins: []string{"app.example"}}}); err == nil {
		t.Error("New accepted an origin without a scheme")
	}
}
