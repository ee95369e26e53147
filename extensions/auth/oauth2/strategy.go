package oauth2

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/extensions/auth/jwt"
)

// Authenticator is the server-side strategy.
type Authenticator struct {
	opts   Options
	client *http.Client // opts.HTTPClient with responses capped
	cache  *cache

	mu        sync.Mutex
	setup     *setup // nil until discovery succeeded (or was not needed)
	attempted time.Time
	lastErr   error
	inflight  chan struct{}
}

// setup is what discovery (or the options alone) yields.
type setup struct {
	verifier   *oidc.IDTokenVerifier // nil without Issuer
	keys       *jwt.RemoteJWKS
	algs       []string
	introspect string // "" without Introspection
}

var _ core.BreadAuthStrategy = (*Authenticator)(nil)

// Strategy returns a core.BreadAuthStrategy for OAuth 2.0 bearer tokens. It
// fails with INVALID_CONFIG on malformed options; it does no I/O (discovery
// and keys are fetched when the first token arrives).
func Strategy(opts Options) (*Authenticator, error) {
	opts, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	a := &Authenticator{opts: opts, client: capClient(opts.HTTPClient, maxResponseBytes)}
	if in := opts.Introspection; in != nil {
		a.cache = newCache(in.CacheSize)
	}
	return a, nil
}

// Name implements core.BreadAuthStrategy.
func (a *Authenticator) Name() string { return a.opts.Name }

// Challenge is the WWW-Authenticate value for a 401 (RFC 6750).
func (a *Authenticator) Challenge(rejection error) string {
	return jwt.BearerChallenge(a.opts.Realm, rejection)
}

// Authenticate returns the identity of a valid token; nil, nil when the
// request carries no bearer token, or a JWT from another issuer, or an
// opaque token without Introspection; a rejection for a token it refuses;
// another error when the issuer or the introspection endpoint could not be
// reached.
func (a *Authenticator) Authenticate(r *http.Request) (*core.AuthIdentity, error) {
	raw, ok, err := jwt.BearerToken(r, a.opts.Header, a.opts.Scheme, a.opts.MaxTokenBytes)
	if err != nil || !ok {
		return nil, err
	}
	peek, isJWT, err := jwt.PeekJWT(raw)
	switch {
	case isJWT && a.opts.Issuer != "":
		if peek.Issuer != a.opts.Issuer {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		s, err := a.ready(r.Context())
		if err != nil {
			return nil, err
		}
		return a.verify(r.Context(), s, raw, peek)
	case a.opts.Introspection != nil:
		endpoint := a.opts.Introspection.URL
		if endpoint == "" {
			s, err := a.ready(r.Context())
			if err != nil {
				return nil, err
			}
			endpoint = s.introspect
		}
		return a.introspect(r.Context(), endpoint, raw)
	}
	return nil, nil
}

// ready returns the setup, discovering the issuer's metadata the first
// time, and again after a failure at most once per MinRefetch.
func (a *Authenticator) ready(ctx context.Context) (*setup, error) {
	a.mu.Lock()
	if a.setup != nil {
		defer a.mu.Unlock()
		return a.setup, nil
	}
	now := a.opts.Now()
	done := a.inflight
	if done == nil && (a.attempted.IsZero() || now.Sub(a.attempted) >= a.opts.MinRefetch) {
		done = make(chan struct{})
		a.inflight, a.attempted = done, now
		go func() {
			s, err := a.discover()
			a.mu.Lock()
			a.setup, a.lastErr, a.inflight = s, err, nil
			a.mu.Unlock()
			close(done)
		}()
	}
	a.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.setup == nil {
		return nil, fmt.Errorf("oauth2: issuer metadata unavailable: %w", a.lastErr)
	}
	return a.setup, nil
}

// discover reads the issuer's metadata when the options leave something to
// discover, and builds the verifier.
func (a *Authenticator) discover() (*setup, error) {
	s := &setup{}
	jwksURL := a.opts.JWKSURL
	if in := a.opts.Introspection; in != nil {
		s.introspect = in.URL
	}
	var supported []string
	needDiscovery := a.opts.Issuer != "" && (jwksURL == "" || (a.opts.Introspection != nil && s.introspect == ""))
	if needDiscovery {
		ctx, cancel := context.WithTimeout(oidc.ClientContext(context.Background(), a.client), a.opts.Timeout)
		defer cancel()
		p, err := oidc.NewProvider(ctx, a.opts.Issuer)
		if err != nil {
			return nil, err
		}
		var meta struct {
			JWKSURI       string   `json:"jwks_uri"`
			Introspection string   `json:"introspection_endpoint"`
			Algs          []string `json:"id_token_signing_alg_values_supported"`
		}
		if err := p.Claims(&meta); err != nil {
			return nil, err
		}
		if jwksURL == "" {
			jwksURL = meta.JWKSURI
		}
		if s.introspect == "" && a.opts.Introspection != nil {
			if !httpURL(meta.Introspection) {
				return nil, errors.New("oauth2: the issuer publishes no introspection_endpoint: set Introspection.URL")
			}
			s.introspect = meta.Introspection
		}
		supported = meta.Algs
	}
	if a.opts.Issuer == "" {
		return s, nil
	}
	keys, err := jwt.NewRemoteJWKS(jwksURL, jwt.JWKSOptions{Client: a.opts.HTTPClient, Timeout: a.opts.Timeout, MinRefetch: a.opts.MinRefetch, Now: a.opts.Now})
	if err != nil {
		return nil, err
	}
	s.keys = keys
	s.algs = a.opts.Algorithms
	if len(s.algs) == 0 {
		for _, alg := range supported {
			if slices.Contains(jwt.AsymmetricAlgorithms(), alg) {
				s.algs = append(s.algs, alg)
			}
		}
	}
	if len(s.algs) == 0 {
		s.algs = []string{"RS256"}
	}
	s.verifier = oidc.NewVerifier(a.opts.Issuer, keySet{keys: keys}, &oidc.Config{
		SupportedSigningAlgs: s.algs,
		// bread checks aud against a list, and exp/nbf/iat with its own
		// bounded skew, below.
		SkipClientIDCheck: true,
		SkipExpiryCheck:   true,
	})
	return s, nil
}

// verify checks a JWT from the issuer.
func (a *Authenticator) verify(ctx context.Context, s *setup, raw string, peek jwt.Peek) (*core.AuthIdentity, error) {
	if !slices.Contains(s.algs, peek.Alg) {
		return nil, jwt.Reject(jwt.ErrorInvalidToken, "the token's algorithm is not accepted")
	}
	res := &sigResult{}
	tok, err := s.verifier.Verify(context.WithValue(ctx, sigResultKey{}, res), raw)
	if err != nil {
		switch {
		case res.err == nil:
			return nil, jwt.Reject(jwt.ErrorInvalidToken, "the token is invalid")
		case errors.Is(res.err, jwt.ErrKeysUnavailable), errors.Is(res.err, context.Canceled), errors.Is(res.err, context.DeadlineExceeded):
			return nil, res.err
		case errors.Is(res.err, errUnknownKey):
			return nil, jwt.Reject(jwt.ErrorInvalidToken, "the token's signing key is unknown")
		}
		return nil, jwt.Reject(jwt.ErrorInvalidToken, "the token's signature is invalid")
	}
	claims := map[string]any{}
	if err := tok.Claims(&claims); err != nil {
		return nil, jwt.Reject(jwt.ErrorInvalidToken, "the token is malformed")
	}
	if err := a.checkClaims(claims, true); err != nil {
		return nil, err
	}
	return a.identity(claims), nil
}

// checkClaims checks the time claims with the skew (exp required when
// requireExp) and the audience.
func (a *Authenticator) checkClaims(claims map[string]any, requireExp bool) error {
	now, skew := a.opts.Now(), a.opts.ClockSkew
	exp, ok, err := numericDate(claims, "exp")
	switch {
	case err != nil:
		return err
	case !ok && requireExp:
		return jwt.Reject(jwt.ErrorInvalidToken, "the token lacks a required claim")
	case ok && !now.Before(exp.Add(skew)):
		return jwt.Reject(jwt.ErrorInvalidToken, "the token has expired")
	}
	if nbf, ok, err := numericDate(claims, "nbf"); err != nil {
		return err
	} else if ok && now.Add(skew).Before(nbf) {
		return jwt.Reject(jwt.ErrorInvalidToken, "the token is not valid yet")
	}
	if iat, ok, err := numericDate(claims, "iat"); err != nil {
		return err
	} else if ok && now.Add(skew).Before(iat) {
		return jwt.Reject(jwt.ErrorInvalidToken, "the token was issued in the future")
	}
	if len(a.opts.Audience) > 0 {
		var auds []string
		switch v := claims["aud"].(type) {
		case string:
			auds = []string{v}
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok {
					auds = append(auds, s)
				}
			}
		}
		if !slices.ContainsFunc(auds, func(s string) bool { return slices.Contains(a.opts.Audience, s) }) {
			return jwt.Reject(jwt.ErrorInvalidToken, "the token is not for this audience")
		}
	}
	return nil
}

func numericDate(claims map[string]any, name string) (time.Time, bool, error) {
	v, ok := claims[name]
	if !ok || v == nil {
		return time.Time{}, false, nil
	}
	f, ok := v.(float64)
	if !ok || f < 0 || f > 1<<40 {
		return time.Time{}, false, jwt.Reject(jwt.ErrorInvalidToken, "the token's "+name+" is not a date")
	}
	return time.Unix(int64(f), 0), true, nil
}

// identity builds the identity: subject from SubjectClaim, then username,
// then client_id.
func (a *Authenticator) identity(claims map[string]any) *core.AuthIdentity {
	id := jwt.Identity(claims, a.opts.SubjectClaim, a.opts.Claims)
	if s, _ := claims[a.opts.SubjectClaim].(string); s == "" {
		id.Subject = DefaultSubject
		for _, c := range []string{"username", "client_id"} {
			if s, _ := claims[c].(string); s != "" {
				id.Subject = s
				break
			}
		}
	}
	return id
}

// keySet adapts a jwt.RemoteJWKS to go-oidc's KeySet, so key fetches are
// rate-limited, bounded and timed out the same way as for the jwt
// strategy.
type keySet struct{ keys *jwt.RemoteJWKS }

var errUnknownKey = errors.New("oauth2: no key for the token")

type sigResultKey struct{}

// sigResult carries the key set's own error past go-oidc, which reports it
// as text.
type sigResult struct{ err error }

func (k keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	payload, err := k.verify(ctx, raw)
	if res, ok := ctx.Value(sigResultKey{}).(*sigResult); ok {
		res.err = err
	}
	return payload, err
}

func (k keySet) verify(ctx context.Context, raw string) ([]byte, error) {
	// go-oidc has checked the alg against the allow-list already; parse
	// again with exactly the asymmetric algorithms.
	jws, err := parseSigned(raw)
	if err != nil {
		return nil, err
	}
	sig := jws.Signatures[0].Header
	keys, err := k.keys.Keys(ctx, sig.KeyID)
	if err != nil {
		return nil, err
	}
	tried := false
	for _, key := range keys {
		if !jwt.KeyFits(sig.Algorithm, key) {
			continue
		}
		tried = true
		if payload, err := jws.Verify(key.Public); err == nil {
			return payload, nil
		}
	}
	if !tried {
		return nil, errUnknownKey
	}
	return nil, errors.New("oauth2: signature invalid")
}

// capClient returns a copy of c whose response bodies fail past max bytes.
func capClient(c *http.Client, max int64) *http.Client {
	cp := *c
	base := cp.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cp.Transport = capTransport{base: base, max: max}
	return &cp
}

type capTransport struct {
	base http.RoundTripper
	max  int64
}

func (t capTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := t.base.RoundTrip(r)
	if err == nil {
		res.Body = &capped{rc: res.Body, left: t.max}
	}
	return res, err
}

var errTooLarge = errors.New("oauth2: response too large")

type capped struct {
	rc   io.ReadCloser
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if n, err := c.rc.Read(one[:]); n > 0 {
			return 0, errTooLarge
		} else {
			return 0, err
		}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.rc.Read(p)
	c.left -= int64(n)
	return n, err
}

func (c *capped) Close() error { return c.rc.Close() }
