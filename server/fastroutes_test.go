package server_test

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/mux"

	"github.com/breadai/bread/server"
)

// The routes matched without gorilla/mux must be matched as gorilla would
// match them: for every route of the server and many paths near its
// template (each method, a trailing slash, a segment more or fewer, an
// empty or escaped parameter, paths gorilla redirects), whatever
// fastRoutes finds is the route gorilla picks first, with the same
// parameters; what it leaves, gorilla decides. And it does find the run
// routes, which start every run.
func TestFastRoutesPickGorillasRoute(t *testing.T) {
	s, err := server.New(newFixture(t, fakeConfig{}).inst, server.Options{Console: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.FastRoutes() < 10 {
		t.Fatalf("fastRoutes holds %d routes, want the server's first ones", s.FastRoutes())
	}
	var templates []string
	_ = s.Mux().Walk(func(r *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := r.GetPathTemplate()
		if err != nil {
			t.Fatal(err)
		}
		templates = append(templates, tpl)
		return nil
	})
	var paths []string
	for _, tpl := range templates {
		p := pathVar.ReplaceAllString(tpl, "x1")
		paths = append(paths, p, p+"/", p+"/more", strings.TrimSuffix(p[:strings.LastIndexByte(p, '/')+1], "/"),
			pathVar.ReplaceAllString(tpl, ""), pathVar.ReplaceAllString(tpl, "a%2Fb"), pathVar.ReplaceAllString(tpl, "a%20b"),
			pathVar.ReplaceAllString(tpl, "."), pathVar.ReplaceAllString(tpl, "x/../y"), "/"+p, p+"?q=1",
			strings.ToUpper(p))
	}
	paths = append(paths, "/", "//", "/agents", "/agents/", "/agents//run", "/agents/a/run/", "/agents/a/./run")
	found := 0
	for _, p := range paths {
		for _, m := range []string{"GET", "POST", "DELETE", "PUT", "PATCH", "get"} {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.Method = m
			if u, err := req.URL.Parse(p); err == nil {
				req.URL = u
			} else {
				continue
			}
			tpl, vars, ok := s.FastMatch(req)
			if !ok {
				continue
			}
			found++
			var match mux.RouteMatch
			if !s.Mux().Match(req, &match) || match.MatchErr != nil || match.Route == nil {
				t.Errorf("%s %s: fastRoutes found %q, gorilla no route (%v)", m, p, tpl, match.MatchErr)
				continue
			}
			gtpl, _ := match.Route.GetPathTemplate()
			if gtpl != tpl || !maps.Equal(vars, match.Vars) {
				t.Errorf("%s %s: fastRoutes found %q %v, gorilla %q %v", m, p, tpl, vars, gtpl, match.Vars)
			}
		}
	}
	for _, run := range []string{"/agents/a/run", "/pipelines/p/run", "/resume/c1"} {
		req := httptest.NewRequest(http.MethodPost, run, nil)
		if tpl, vars, ok := s.FastMatch(req); !ok || len(vars) != 1 {
			t.Errorf("POST %s: fastRoutes found %q %v, %v; want its run route", run, tpl, vars, ok)
		}
	}
	if found < len(templates) {
		t.Errorf("fastRoutes found %d of the probes, want at least one per route", found)
	}
}
