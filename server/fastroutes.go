package server

import (
	"net/http"
	"path"
	"strings"
)

// fastRoutes matches the routes registered first without gorilla/mux,
// which for every request tries each route's path regexp in turn, then
// copies the request twice for its context values and builds a map of the
// path parameters: for a short run that was a tenth of the server's own
// work. It holds the longest prefix of the routes, in registration order,
// whose templates it can match itself (literal segments and {name}
// segments, gorilla's default pattern [^/]+), so the first route it finds
// is the one gorilla would pick: gorilla also takes the first route that
// matches in registration order. Whatever it does not find, a path gorilla
// would redirect to its clean form, a method no route of the path takes,
// a path no route of the prefix matches, goes to gorilla as before.
type fastRoutes struct {
	routes []fastRoute
	// closed is set once a route it cannot match was registered: no later
	// route may be matched before that one.
	closed bool
}

// fastRoute is one route's template split on "/", "" standing for a
// {name} segment, named in vars at its index.
type fastRoute struct {
	template string
	action   string
	method   string // "" matches every method
	segments []string
	vars     []string // vars[i] names segments[i] when it is a parameter
	handler  http.Handler
}

// add registers a route after every route before it; a template it cannot
// match closes the prefix.
func (f *fastRoutes) add(action, method, template string, h http.Handler) {
	if f.closed {
		return
	}
	r, ok := compileFastRoute(template)
	if !ok {
		f.closed = true
		return
	}
	r.template, r.action, r.handler = template, action, h
	if method != "*" {
		r.method = strings.ToUpper(method) // gorilla's Methods upper-cases too
	}
	f.routes = append(f.routes, r)
}

// compileFastRoute splits a template of literal and {name} segments; a
// {name:pattern}, a parameter inside a segment, or anything else gorilla
// reads as a regexp is refused.
func compileFastRoute(template string) (fastRoute, bool) {
	if !strings.HasPrefix(template, "/") || strings.ContainsAny(template, `\.+*?()|[]^$:`) {
		return fastRoute{}, false
	}
	segments := strings.Split(template[1:], "/")
	r := fastRoute{segments: segments, vars: make([]string, len(segments))}
	seen := map[string]bool{}
	for i, s := range segments {
		open, close := strings.IndexByte(s, '{'), strings.IndexByte(s, '}')
		switch {
		case open < 0 && close < 0:
			// a literal
		case open == 0 && close == len(s)-1 && len(s) > 2 && strings.Count(s, "{") == 1 && strings.Count(s, "}") == 1:
			name := s[1 : len(s)-1]
			if seen[name] {
				return fastRoute{}, false // gorilla never matches such a route
			}
			seen[name] = true
			r.vars[i], r.segments[i] = name, ""
		default:
			return fastRoute{}, false
		}
	}
	return r, true
}

// match returns the first route that takes r's method and path with the
// values of its parameters, in segment order; ok is false when gorilla
// must decide.
func (f *fastRoutes) match(r *http.Request) (route *fastRoute, values []string, ok bool) {
	p := r.URL.Path
	if p == "" || p[0] != '/' || cleanPath(p) != p {
		return nil, nil, false // gorilla redirects it to its clean form
	}
	rest := p[1:]
	for i := range f.routes {
		fr := &f.routes[i]
		if fr.method != "" && fr.method != r.Method {
			continue
		}
		if values, ok := fr.matchPath(rest); ok {
			return fr, values, true
		}
	}
	return nil, nil, false
}

// matchPath matches a path without its leading "/" against the route's
// segments: a literal exactly, a parameter any non-empty segment.
func (fr *fastRoute) matchPath(rest string) ([]string, bool) {
	var values []string
	for i, seg := range fr.segments {
		part, more, found := strings.Cut(rest, "/")
		if last := i == len(fr.segments)-1; last == found {
			return nil, false // the path has more segments, or fewer
		}
		if fr.vars[i] == "" {
			if part != seg {
				return nil, false
			}
		} else {
			if part == "" {
				return nil, false
			}
			if values == nil {
				values = make([]string, 0, 2)
			}
			values = append(values, part)
		}
		rest = more
	}
	return values, true
}

// cleanPath is gorilla/mux's: the path's canonical form, which it answers
// a redirect to when the request's path differs. path.Clean allocates
// nothing for a path already clean.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}
