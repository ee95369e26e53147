package server

import (
	"net/http"

	"github.com/gorilla/mux"
)

// Mux exposes the server's router, before middleware, to the tests of
// package server_test.
func (s *Server) Mux() *mux.Router { return s.mux }

// FastMatch is what the server's fastRoutes find for r: the template of
// the route and its path parameters, or ok false when gorilla/mux decides.
func (s *Server) FastMatch(r *http.Request) (template string, vars map[string]string, ok bool) {
	fr, values, ok := s.fast.match(r)
	if !ok {
		return "", nil, false
	}
	vars = map[string]string{}
	n := 0
	for _, name := range fr.vars {
		if name != "" {
			vars[name] = values[n]
			n++
		}
	}
	return fr.template, vars, true
}

// FastRoutes is how many routes, the first registered, fastRoutes holds.
func (s *Server) FastRoutes() int { return len(s.fast.routes) }
