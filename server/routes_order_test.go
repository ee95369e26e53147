package server_test

import (
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/gorilla/mux"

	"github.com/breadai/bread/server"
)

// pathVar is a {name} or {name:pattern} of a route template.
var pathVar = regexp.MustCompile(`\{[^}]+\}`)

// Routes match in registration order, and the streaming routes are
// registered first because they start every run. That is safe only while
// no path is answered by two routes: for every route and method, a path
// built from the route's template matches that route alone.
func TestEveryPathMatchesOneRoute(t *testing.T) {
	s, err := server.New(newFixture(t, fakeConfig{}).inst, server.Options{Console: true})
	if err != nil {
		t.Fatal(err)
	}
	var routes []*mux.Route
	_ = s.Mux().Walk(func(r *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		routes = append(routes, r)
		return nil
	})
	if len(routes) < 20 {
		t.Fatalf("walked %d routes, want every route of the server", len(routes))
	}
	for _, r := range routes {
		tpl, err := r.GetPathTemplate()
		if err != nil {
			t.Fatal(err)
		}
		methods, _ := r.GetMethods()
		path := pathVar.ReplaceAllString(tpl, "x1")
		for _, m := range methods {
			req := httptest.NewRequest(m, path, nil)
			var hits []string
			for _, o := range routes {
				var match mux.RouteMatch
				if o.Match(req, &match) && match.MatchErr == nil {
					hits = append(hits, o.GetName())
				}
			}
			if len(hits) != 1 || hits[0] != r.GetName() {
				t.Errorf("%s %s (route %s %q) matches %v, want that route alone", m, path, r.GetName(), tpl, hits)
			}
		}
	}
}
