package server_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server"
)

func TestCORS(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ts := f.serve(t, server.Options{CORS: server.CORS{Origins: []string{"https://app.example"}},
		Auth: &server.Auth{Strategies: []core.BreadAuthStrategy{headerAuth{}}, Authorize: func(_ context.Context, id *core.AuthIdentity, _ string, _ map[string]string) bool { return id != nil }}})
	preflight := func(origin, headers string) reply {
		return do(t, ts.URL, http.MethodOptions, "/agents/writer/run", "",
			"Origin", origin, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", headers)
	}
	// A preflight carries no credentials: answered ahead of auth.
	r := preflight("https://app.example", "content-type, authorization")
	if r.status != http.StatusNoContent || r.header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		r.header.Get("Access-Control-Allow-Methods") == "" || r.header.Get("Access-Control-Max-Age") != "600" {
		t.Fatalf("an allowed preflight: %d %v", r.status, r.header)
	}
	if r := preflight("https://evil.example", "content-type"); r.status != http.StatusForbidden || r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("a preflight from another origin: %d %v", r.status, r.header)
	}
	if r := preflight("https://app.example", "x-secret"); r.status != http.StatusForbidden {
		t.Fatalf("a preflight for a header bread does not read: %d", r.status)
	}
	// The real request still needs its credentials, and its answer is
	// readable by the allowed origin only.
	if r := do(t, ts.URL, http.MethodGet, "/agents", "", "Origin", "https://app.example"); r.status != http.StatusUnauthorized || r.header.Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Fatalf("without credentials: %d %v", r.status, r.header)
	}
	r = do(t, ts.URL, http.MethodGet, "/agents", "", "Origin", "https://app.example", "X-Identity", "alice")
	if r.status != http.StatusOK || r.header.Get("Access-Control-Allow-Origin") != "https://app.example" || r.header.Get("Access-Control-Expose-Headers") == "" {
		t.Fatalf("with credentials: %d %v", r.status, r.header)
	}
	if r := do(t, ts.URL, http.MethodGet, "/agents", "", "Origin", "https://evil.example", "X-Identity", "alice"); r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("another origin got CORS headers: %v", r.header)
	}
}

func TestNoCORSByDefault(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ts := f.serve(t, server.Options{})
	r := do(t, ts.URL, http.MethodOptions, "/agents", "", "Origin", "https://app.example", "Access-Control-Request-Method", "GET")
	if r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("CORS headers without configuration: %v", r.header)
	}
}
