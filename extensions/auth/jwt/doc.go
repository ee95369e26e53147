// Package jwt is bearer-JWT auth for bread: Strategy verifies the signed
// token an incoming request presents (a core.BreadAuthStrategy for the
// server) against an HMAC secret, a static key set or a remote JWKS.
//
// Verification is golang-jwt/jwt/v5 with an algorithm allow-list: "none" is
// never accepted, an HS* token is only ever checked with the configured
// secret and an RS/PS/ES/EdDSA token only with a public key of the matching
// type, so a token signed with HMAC over a public key (algorithm confusion)
// fails. iss, aud, exp and nbf are checked with a bounded clock skew.
//
// A remote JWKS (RemoteJWKS) is fetched lazily, cached, refreshed on a
// schedule and refetched when a token names an unknown kid, at most once per
// MinRefetch, with a timeout and a size cap on every fetch.
//
// The strategy follows bread's composition rule (see server.AuthMiddleware):
// a request without a bearer JWT, or whose JWT names another issuer, is not
// this strategy's and passes to the next one; a JWT it recognises and
// refuses is a rejection (a core.BreadError with code UNAUTHORIZED) that
// ends the chain with 401 and an RFC 6750 WWW-Authenticate challenge.
package jwt
