// Package trusted is trusted-proxy auth for bread: Strategy takes the
// caller's identity (user, groups, chosen claims) from headers that a
// reverse proxy or service mesh in front of bread sets after it has
// authenticated the caller itself (oauth2-proxy, Pomerium, an Envoy or
// Istio filter, nginx auth_request).
//
// The headers are believed only when the request's direct peer is one of
// the configured proxies: an address in Options.Proxies (CIDRs) or, with
// Options.UnixSocket, any peer of a Unix-socket listener. From any other
// peer the headers are ignored and deleted from the request, so no handler
// behind the strategy can read a forged one; Scrub does the deleting before
// any strategy runs when the strategy is composed by server.AuthMiddleware.
//
// The peer is the TCP connection's remote address (http.Request.RemoteAddr)
// and the listener's local address (http.LocalAddrContextKey); nothing in
// X-Forwarded-For is believed.
package trusted
