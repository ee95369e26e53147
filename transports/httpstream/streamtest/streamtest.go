// Package streamtest serves a core.Mounter, such as an httpstream.Ingress,
// over plain net/http, for tests that must not depend on the server module:
// the tests of httpstream and of the remote agent client
// (httpstream/remoteagent, transports/httpchunked, transports/httpsse).
// Beside m's routes it serves POST /runs/{runId}/cancel, as the server
// does, through the Runtime's Cancel. It authenticates and authorizes nothing; wrap the
// handler with middleware for that. Programs serve an Ingress through
// package server instead.
//
// LongRun and Cuts are the scenario of the reconnect tests: a long run
// paced by its client, and the seeded points where the client drops.
package streamtest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
)

// Router is a core.Router on an http.ServeMux. Path parameters reach
// handlers through (*http.Request).PathValue, as with the server.
type Router struct {
	mux     *http.ServeMux
	mu      sync.Mutex
	actions map[string]string
}

var _ core.Router = (*Router)(nil)

// NewRouter returns an empty Router.
func NewRouter() *Router {
	return &Router{mux: http.NewServeMux(), actions: map[string]string{}}
}

// Handle registers h for method and path ("*" or "" for every method). It
// panics on a pattern that conflicts with one already registered, as
// http.ServeMux does.
func (r *Router) Handle(action, method, path string, h http.Handler) {
	pattern := path
	if method != "" && method != "*" {
		pattern = method + " " + path
	}
	r.mux.Handle(pattern, h)
	r.mu.Lock()
	r.actions[pattern] = action
	r.mu.Unlock()
}

// Actions returns the action of every registered pattern ("METHOD /path").
func (r *Router) Actions() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]string, len(r.actions))
	for k, v := range r.actions {
		out[k] = v
	}
	return out
}

// ServeHTTP dispatches to the registered routes.
func (r *Router) ServeHTTP(w http.ResponseWriter, req *http.Request) { r.mux.ServeHTTP(w, req) }

// Serve mounts m for rt on a new Router, wraps it in middleware (the first
// is outermost) and serves it on a loopback httptest.Server that is closed
// when the test ends.
func Serve(t testing.TB, m core.Mounter, rt core.Runtime, middleware ...func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	r := NewRouter()
	m.Mount(r, rt)
	r.Handle(core.ActionRunCancel, http.MethodPost, "/runs/{runId}/cancel", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if !rt.Cancel(req.PathValue("runId")) {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"code":"NOT_FOUND","message":"the run is not running here"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	var h http.Handler = r
	for i := len(middleware) - 1; i >= 0; i-- {
		h = middleware[i](h)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}
