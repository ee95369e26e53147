package oauth2

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/extensions/auth/jwt"
)

// Defaults.
const (
	DefaultSubject    = "oauth2"
	DefaultTimeout    = 5 * time.Second
	DefaultMinRefetch = 30 * time.Second
	DefaultCacheSize  = 1024
	DefaultCacheTTL   = time.Minute
	// MaxCacheTTL bounds how long a revoked token can stay accepted from
	// the introspection cache.
	MaxCacheTTL = 10 * time.Minute
	// maxResponseBytes bounds discovery and introspection responses.
	maxResponseBytes = 1 << 20
)

// Options say which tokens the strategy accepts.
type Options struct {
	// Issuer is the OIDC issuer URL. JWT tokens naming it are verified
	// locally; JWTs naming another issuer pass to the next strategy.
	Issuer string
	// JWKSURL skips discovery: the issuer's keys are read from it.
	JWKSURL string
	// Audience lists accepted aud values of JWT tokens and introspection
	// answers; the token must name one. Empty accepts any audience of the
	// issuer (set it: an issuer signs tokens for other APIs too).
	Audience []string
	// Algorithms allowed for JWT tokens (default: the issuer's
	// id_token_signing_alg_values_supported that bread verifies, else
	// RS256). HMAC and "none" are never accepted.
	Algorithms []string

	// Introspection, when set, checks tokens at an RFC 7662 endpoint:
	// every non-JWT bearer token, and JWTs too when Issuer is empty.
	Introspection *Introspection

	// ClockSkew is the tolerance on exp, nbf and iat (default 30s, at most
	// 5m).
	ClockSkew time.Duration
	// SubjectClaim names the claim that becomes the identity's subject
	// (default "sub"; introspection answers fall back to username, then
	// client_id).
	SubjectClaim string
	// Claims are the claims copied into the identity (empty: all). The
	// token's scopes are added as "scopes" either way.
	Claims []string

	// Header and Scheme say where the token travels (default
	// Authorization: Bearer).
	Header, Scheme string
	// MaxTokenBytes refuses longer tokens before decoding (default 8 KiB).
	MaxTokenBytes int
	// Realm is the realm of the WWW-Authenticate challenge (default bread).
	Realm string
	// Name is the strategy's name (default "oauth2").
	Name string

	// HTTPClient makes discovery, key and introspection requests (default:
	// a fresh client).
	HTTPClient *http.Client
	// Timeout bounds each of those requests (default 5s).
	Timeout time.Duration
	// MinRefetch is the least time between two discovery attempts and two
	// key-set fetches (default 30s).
	MinRefetch time.Duration
	// Now is the clock (default time.Now), for tests.
	Now func() time.Time
}

// Introspection configures RFC 7662 token introspection.
type Introspection struct {
	// URL is the introspection endpoint (default: the issuer's
	// introspection_endpoint from discovery).
	URL string
	// ClientID and ClientSecret authenticate bread to the endpoint (HTTP
	// Basic, RFC 6749 §2.3.1).
	ClientID, ClientSecret string
	// CacheSize bounds the answers kept (default 1024; a token is kept as
	// its SHA-256 digest, never in clear).
	CacheSize int
	// CacheTTL bounds how long an answer is kept (default 1m, at most 10m,
	// never past the token's exp): a token revoked at the server stays
	// accepted here for at most this long.
	CacheTTL time.Duration
}

func invalid(format string, args ...any) error {
	return core.Errorf(core.CodeInvalidConfig, "oauth2: "+format, args...)
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

func (o Options) normalize() (Options, error) {
	if o.Issuer == "" && o.Introspection == nil {
		return o, invalid("set Issuer (JWT tokens, OIDC discovery) and/or Introspection (opaque tokens)")
	}
	if o.Issuer != "" && !httpURL(o.Issuer) {
		return o, invalid("Issuer %q is not an http(s) URL", o.Issuer)
	}
	if o.JWKSURL != "" {
		if o.Issuer == "" {
			return o, invalid("JWKSURL needs Issuer: tokens are matched to their issuer")
		}
		if !httpURL(o.JWKSURL) {
			return o, invalid("JWKSURL %q is not an http(s) URL", o.JWKSURL)
		}
	}
	for _, a := range o.Audience {
		if strings.TrimSpace(a) == "" {
			return o, invalid("an Audience is empty")
		}
	}
	for _, alg := range o.Algorithms {
		if !slices.Contains(jwt.AsymmetricAlgorithms(), alg) {
			return o, invalid("algorithm %q is not accepted (known: %s)", alg, strings.Join(jwt.AsymmetricAlgorithms(), ", "))
		}
	}
	if in := o.Introspection; in != nil {
		cp := *in
		in = &cp
		if in.URL == "" && o.Issuer == "" {
			return o, invalid("Introspection needs a URL, or an Issuer to discover it from")
		}
		if in.URL != "" && !httpURL(in.URL) {
			return o, invalid("Introspection URL %q is not an http(s) URL", in.URL)
		}
		if in.ClientID == "" {
			return o, invalid("Introspection needs ClientID (and usually ClientSecret) to call the endpoint")
		}
		if in.CacheSize < 0 || in.CacheTTL < 0 || in.CacheTTL > MaxCacheTTL {
			return o, invalid("Introspection cache: size must be positive and TTL within 0..%v", MaxCacheTTL)
		}
		if in.CacheSize == 0 {
			in.CacheSize = DefaultCacheSize
		}
		if in.CacheTTL == 0 {
			in.CacheTTL = DefaultCacheTTL
		}
		o.Introspection = in
	}
	if o.ClockSkew < 0 || o.ClockSkew > jwt.MaxClockSkew {
		return o, invalid("ClockSkew %v is outside 0..%v", o.ClockSkew, jwt.MaxClockSkew)
	}
	if o.ClockSkew == 0 {
		o.ClockSkew = jwt.DefaultClockSkew
	}
	if o.Header == "" {
		o.Header = jwt.DefaultHeader
	}
	o.Header = http.CanonicalHeaderKey(o.Header)
	if o.Scheme == "" && o.Header == jwt.DefaultHeader {
		o.Scheme = jwt.DefaultScheme
	}
	if strings.ContainsAny(o.Header, " :\t") || strings.ContainsAny(o.Scheme, " \t") {
		return o, invalid("Header and Scheme must be single tokens")
	}
	if o.SubjectClaim == "" {
		o.SubjectClaim = "sub"
	}
	if o.MaxTokenBytes < 0 || o.Timeout < 0 || o.MinRefetch < 0 {
		return o, invalid("MaxTokenBytes, Timeout and MinRefetch cannot be negative")
	}
	if o.MaxTokenBytes == 0 {
		o.MaxTokenBytes = jwt.DefaultMaxTokenBytes
	}
	if o.Realm == "" {
		o.Realm = jwt.DefaultRealm
	}
	if o.Name == "" {
		o.Name = "oauth2"
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MinRefetch == 0 {
		o.MinRefetch = DefaultMinRefetch
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}
