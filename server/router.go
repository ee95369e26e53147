package server

import (
	"net/http"
	"slices"

	"github.com/gorilla/mux"

	"github.com/breadai/bread/core"
)

// router is the core.Router the server hands to its own routes, the
// transport and plugins: a gorilla/mux route per call, named by its action
// and wrapped in the gate.
type router struct {
	s   *Server
	mux *mux.Router
}

var _ core.Router = (*router)(nil)

// Handle registers h. Routes match in registration order, which is why the
// server adds its static paths (POST /sessions/cleanup) before the
// parameterised ones.
func (rt *router) Handle(action, method, path string, h http.Handler) {
	route := rt.mux.Handle(path, rt.s.gate(action, bodyCap(rt.s.opts.MaxBodyBytes, h)))
	if method != "" && method != "*" {
		route.Methods(method)
	}
	if action != "" {
		rt.s.actions[action] = true
		route.Name(action)
	}
}

// gate runs after the route matched: it exposes the path parameters to
// (*http.Request).PathValue, then, with auth on, refuses unnamed routes and
// asks Authorize about the action with the path and query parameters.
func (s *Server) gate(action string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vars := mux.Vars(r)
		for k, v := range vars {
			r.SetPathValue(k, v)
		}
		if slices.Contains(runStarting, action) {
			if !s.drain.enter() {
				s.refuseDraining(w)
				return
			}
			defer s.drain.leave()
		}
		if s.authOn && !s.public[action] {
			if action == "" || s.authorize == nil {
				forbidden(w)
				return
			}
			if !s.authorize(r.Context(), core.IdentityFrom(r.Context()), action, authArgs(r, vars)) {
				forbidden(w)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// authArgs merges the query (first value of each key) with the path
// parameters; a path parameter wins.
func authArgs(r *http.Request, vars map[string]string) map[string]string {
	q := r.URL.Query()
	args := make(map[string]string, len(q)+len(vars))
	for k, vs := range q {
		if len(vs) > 0 {
			args[k] = vs[0]
		}
	}
	for k, v := range vars {
		args[k] = v
	}
	return args
}
