package server

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CORS lets browser apps on other origins call the server. The zero value
// allows no other origin, which is the default: same-origin pages need
// nothing.
type CORS struct {
	// Origins are the allowed origins, exactly as browsers send them
	// ("https://app.example.com", no path); "*" allows any origin. The
	// answer names the caller's origin, never "*".
	Origins []string
	// MaxAge is how long a browser may cache a preflight answer (default
	// 10 minutes).
	MaxAge time.Duration
}

// corsMethods and corsHeaders are what bread's routes use.
var (
	corsMethods = "GET, POST, DELETE, OPTIONS"
	// Headers a browser may send beyond the safelisted ones.
	corsHeaders = []string{"authorization", "content-type", "last-event-id", "accept"}
	// Headers a page may read from a response.
	corsExpose = "X-Bread-Stream-Token, Retry-After, WWW-Authenticate"
)

// allows reports whether origin may call the server.
func (c CORS) allows(origin string) bool {
	return origin != "" && (slices.Contains(c.Origins, "*") || slices.Contains(c.Origins, origin))
}

// cors answers preflights itself, ahead of the Host guard and auth (a
// preflight carries no credentials), and adds the CORS headers to the
// answers to allowed origins. A request from an origin that is not allowed
// gets no CORS headers (its browser then hides the answer); its preflight
// is 403.
func (c CORS) middleware(next http.Handler) http.Handler {
	maxAge := c.MaxAge
	if maxAge <= 0 {
		maxAge = 10 * time.Minute
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Add("Vary", "Origin")
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		if !c.allows(origin) {
			if preflight {
				forbidden(w)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		if !preflight {
			h.Set("Access-Control-Expose-Headers", corsExpose)
			next.ServeHTTP(w, r)
			return
		}
		for _, want := range strings.Split(r.Header.Get("Access-Control-Request-Headers"), ",") {
			if want = strings.ToLower(strings.TrimSpace(want)); want != "" && !slices.Contains(corsHeaders, want) {
				forbidden(w) // a header bread does not read: refuse rather than half-allow
				return
			}
		}
		h.Set("Access-Control-Allow-Methods", corsMethods)
		h.Set("Access-Control-Allow-Headers", strings.Join(corsHeaders, ", "))
		h.Set("Access-Control-Max-Age", strconv.Itoa(int(maxAge.Seconds())))
		w.WriteHeader(http.StatusNoContent)
	})
}
