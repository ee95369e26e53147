package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server"
)

// thirdPartyIngress is a transport of another package that serves the
// streaming routes its own way, knowing only core.Router and core.Runtime:
// it answers each route with a fixed line naming it.
type thirdPartyIngress struct{}

func (thirdPartyIngress) Mount(r core.Router, _ core.Runtime) {
	for _, rt := range []struct{ action, method, path string }{
		{core.ActionRunStart, "POST", "/agents/{id}/run"},
		{core.ActionPipelineStart, "POST", "/pipelines/{id}/run"},
		{core.ActionRunResume, "POST", "/resume/{checkpointId}"},
		{core.ActionRunStream, "GET", "/runs/{runId}/stream"},
	} {
		r.Handle(rt.action, rt.method, rt.path, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			_, _ = io.Copy(io.Discard, req.Body)
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "third-party "+rt.action)
		}))
	}
}

// TestAConfiguredIngressServesTheStreamingRoutes: Options.Ingress, a
// transport's own core.Mounter, serves the four streaming routes instead
// of httpstream's, behind the server's guards: the Host guard and the body
// cap still answer first.
func TestAConfiguredIngressServesTheStreamingRoutes(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ts := f.serve(t, server.Options{Ingress: thirdPartyIngress{}, MaxBodyBytes: 64})
	for _, c := range []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
		want                     string
	}{
		{"run", "POST", "/agents/writer/run", `{"input":"hi"}`, nil, 200, "third-party " + core.ActionRunStart},
		{"pipeline", "POST", "/pipelines/p/run", `{}`, nil, 200, "third-party " + core.ActionPipelineStart},
		{"resume", "POST", "/resume/cp-1", `{}`, nil, 200, "third-party " + core.ActionRunResume},
		{"passive stream", "GET", "/runs/r-1/stream", "", nil, 200, "third-party " + core.ActionRunStream},
		{"a foreign Host", "POST", "/agents/writer/run", `{}`, []string{"Host", "evil.example"}, 403, `{"error":"Forbidden"}`},
		{"a body over the cap", "POST", "/agents/writer/run", strings.Repeat("x", 65), nil, 413, "BODY_TOO_LARGE"},
		{"the server's own routes stay", "GET", "/agents", "", nil, 200, `"writer"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, ts.URL, c.method, c.path, c.body, c.hdr...)
			if r.status != c.status || !strings.Contains(string(r.body), c.want) {
				t.Fatalf("%d %s, want %d %s", r.status, r.body, c.status, c.want)
			}
		})
	}
}
