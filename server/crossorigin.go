package server

import (
	"net/http"

	"github.com/breadai/bread/core"
)

// crossOriginGuard refuses, with the seed's 403, an unsafe request (any
// method but GET, HEAD and OPTIONS) that a browser sends on behalf of a page
// of another origin: net/http's CrossOriginProtection, which reads
// Sec-Fetch-Site and, from browsers that do not send it, compares Origin
// with Host. A page can make a browser send a "simple" cross-site POST
// (text/plain, no preflight) to a server on loopback; without this guard a
// no-auth server would run it. Clients that are not browsers (curl, SDKs,
// the remote-agent clients) send neither header and pass; so do same-origin
// pages, the console among them. The CORS origins are trusted: a page the
// operator lets call the server may call it. "*" is a CORS wildcard for
// reading answers only, and trusts no origin here: list the origins, or
// set Options.AllowCrossOrigin.
func crossOriginGuard(origins []string, next http.Handler) (http.Handler, error) {
	cop := http.NewCrossOriginProtection()
	for _, o := range origins {
		if o == "*" {
			continue
		}
		if err := cop.AddTrustedOrigin(o); err != nil {
			return nil, core.Errorf(core.CodeInvalidConfig, "Options.CORS.Origins: %v", err)
		}
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { forbidden(w) }))
	return cop.Handler(next), nil
}
