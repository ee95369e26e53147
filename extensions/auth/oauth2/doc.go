// Package oauth2 is OAuth 2.0 auth for bread, both ways.
//
// Strategy verifies incoming bearer tokens (a core.BreadAuthStrategy):
//
//   - JWT tokens (OIDC ID tokens, RFC 9068 access tokens) from Issuer are
//     verified locally through github.com/coreos/go-oidc/v3: the issuer's
//     metadata comes from OIDC discovery (Issuer +
//     /.well-known/openid-configuration, fetched lazily and retried at most
//     once per MinRefetch) unless JWKSURL is given, and the keys from a
//     jwt.RemoteJWKS (cached, refetched on an unknown kid at most once per
//     MinRefetch). aud, exp, nbf and iat are checked with a bounded skew.
//   - opaque tokens are checked by token introspection (RFC 7662) when
//     Introspection is set, with a cache bounded in size and time.
//
// Signer is the outbound side (a core.BreadSigner): an access token from
// the client-credentials grant (golang.org/x/oauth2/clientcredentials),
// cached until shortly before it expires, for remote agents and MCP
// servers.
//
// Composition follows server.AuthMiddleware: a request without a bearer
// token, or with a JWT from another issuer, passes to the next strategy; a
// token this strategy checks and refuses is a rejection (401 with an RFC
// 6750 challenge); an issuer or introspection endpoint that cannot be
// reached is a failure to check (500 unless another strategy
// authenticates).
package oauth2
