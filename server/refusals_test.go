package server_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server"
)

// TestStreamingRouteRefusals holds each row of the README's refusal table
// of the streaming routes served through the server: the HTTP statuses the
// server adds ahead of them (403, 413, 503 while draining), and that a
// refusal concerning a run stays a 200 stream ending in its error.
func TestStreamingRouteRefusals(t *testing.T) {
	for _, c := range []struct {
		name, method, path, body string
		hdr                      []string
		drain, auth              bool
		status                   int
		want                     string
	}{
		{"no credentials (auth on)", "POST", "/agents/writer/run", `{"input":"hi"}`, nil, false, true, 401, "UNAUTHORIZED"},
		{"an action not granted (auth on)", "POST", "/agents/writer/run", `{"input":"hi"}`, []string{"X-Identity", "mallory"}, false, true, 403, `{"error":"Forbidden"}`},
		{"a foreign Host (auth off)", "POST", "/agents/writer/run", `{"input":"hi"}`, []string{"Host", "evil.example"}, false, false, 403, `{"error":"Forbidden"}`},
		{"a cross-site browser request", "POST", "/agents/writer/run", `{"input":"hi"}`, []string{"Sec-Fetch-Site", "cross-site"}, false, false, 403, `{"error":"Forbidden"}`},
		{"a body over the cap", "POST", "/agents/writer/run", `{"input":"` + strings.Repeat("x", 100) + `"}`, nil, false, false, 413, "BODY_TOO_LARGE"},
		{"a run while draining", "POST", "/agents/writer/run", `{"input":"hi"}`, nil, true, false, 503, "INSTANCE_STOPPING"},
		{"an unknown agent", "POST", "/agents/ghost/run", `{"input":"hi"}`, nil, false, false, 200, `"AGENT_NOT_FOUND"`},
		{"a body that is not JSON", "POST", "/agents/writer/run", `{"input":`, nil, false, false, 200, `"BAD_REQUEST"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, fakeConfig{})
			opts := server.Options{MaxBodyBytes: 64}
			if c.auth {
				opts.Auth = &server.Auth{Strategies: []core.BreadAuthStrategy{headerAuth{}}, Authorize: func(context.Context, *core.AuthIdentity, string, map[string]string) bool { return false }}
			}
			srv, err := server.New(f.inst, opts)
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(srv.Handler())
			t.Cleanup(hs.Close)
			ts := hs.URL
			if c.drain {
				if err := srv.Drain(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			r := do(t, ts, c.method, c.path, c.body, append([]string{"Accept", "application/x-ndjson"}, c.hdr...)...)
			if r.status != c.status || !strings.Contains(string(r.body), c.want) {
				t.Fatalf("%d %s, want %d %s", r.status, r.body, c.status, c.want)
			}
			if c.status == 503 && r.header.Get("Retry-After") == "" {
				t.Fatal("503 without Retry-After")
			}
			if c.status == 200 && !strings.Contains(string(r.body), `"agent:error"`) {
				t.Fatalf("the stream does not end in agent:error: %s", r.body)
			}
		})
	}
}
