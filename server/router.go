package server

import (
	"net/http"
	"slices"

	"github.com/gorilla/mux"

	"github.com/breadai/bread/core"
)

// router is the core.Router the server hands to its own routes, the
// transport and plugins: a gorilla/mux route per call, named by its action
// and wrapped in the gate, and the handler that serves them (fastRoutes
// first).
type router struct {
	s    *Server
	mux  *mux.Router
	fast fastRoutes
}

var _ core.Router = (*router)(nil)

// Handle registers h. Routes match in registration order, which is why the
// server adds its static paths (POST /sessions/cleanup) before the
// parameterised ones.
func (rt *router) Handle(action, method, path string, h http.Handler) {
	var capped http.Handler
	if g, ok := h.(GRPCHandler); ok && g.ServesGRPC() {
		capped = grpcBody(rt.s.opts.MaxBodyBytes, h)
	} else {
		capped = bodyCap(rt.s.opts.MaxBodyBytes, h)
	}
	route := rt.mux.Handle(path, rt.s.gate(action, capped))
	if method != "" && method != "*" {
		route.Methods(method)
	}
	if action != "" {
		rt.s.actions[action] = true
		route.Name(action)
	}
	rt.fast.add(action, method, path, capped)
}

// ServeHTTP serves a request on the first route that matches it: found by
// fastRoutes when it can, by gorilla/mux otherwise (the same route, or
// gorilla's redirect, 404 or 405).
func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fr, values, ok := rt.fast.match(r)
	if !ok {
		rt.mux.ServeHTTP(w, r)
		return
	}
	var vars map[string]string // Authorize's arguments, as gorilla's Vars
	if rt.s.authOn {
		vars = make(map[string]string, len(values))
	}
	n := 0
	for _, name := range fr.vars {
		if name == "" {
			continue
		}
		r.SetPathValue(name, values[n])
		if vars != nil {
			vars[name] = values[n]
		}
		n++
	}
	rt.s.pass(w, r, fr.action, vars, fr.handler)
}

// gate runs after gorilla/mux matched a route: it exposes the path
// parameters to (*http.Request).PathValue, then passes the request on.
func (s *Server) gate(action string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vars := mux.Vars(r)
		for k, v := range vars {
			r.SetPathValue(k, v)
		}
		s.pass(w, r, action, vars, h)
	})
}

// pass serves a request its route matched: a run-starting action is
// refused while the server drains, and with auth on it refuses unnamed
// routes and asks Authorize about the action with the path (vars) and
// query parameters.
func (s *Server) pass(w http.ResponseWriter, r *http.Request, action string, vars map[string]string, h http.Handler) {
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
