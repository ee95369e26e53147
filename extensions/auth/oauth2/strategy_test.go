package oauth2_test

import (
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	gojwt "github.com/golang-jwt/jwt/v5"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/extensions/auth/jwt"
	"github.com/breadai/bread/extensions/auth/oauth2"
)

type outcome int

const (
	pass outcome = iota
	accept
	reject
	failure
)

func (o outcome) String() string { return [...]string{"pass", "accept", "reject", "failure"}[o] }

func classify(id *core.AuthIdentity, err error) outcome {
	switch {
	case err != nil && jwt.IsRejection(err):
		return reject
	case err != nil:
		return failure
	case id != nil:
		return accept
	}
	return pass
}

func bearer(tok string) *http.Request {
	r := httptest.NewRequest("GET", "/agents", nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	return r
}

func oidcStrategy(t *testing.T, p *idp, c *clock, mod func(*oauth2.Options)) *oauth2.Authenticator {
	t.Helper()
	o := oauth2.Options{Issuer: p.URL, Audience: []string{audience}, Now: c.Now}
	if mod != nil {
		mod(&o)
	}
	s, err := oauth2.Strategy(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestOIDCMatrix(t *testing.T) {
	p := newIDP(t)
	c := newClock()
	s := oidcStrategy(t, p, c, nil)
	rs := func(over map[string]any) string {
		return sign(t, gojwt.SigningMethodRS256, rsaKey, "k1", p.claims(over))
	}
	pub := must(x509.MarshalPKIXPublicKey(&rsaKey.PublicKey))
	cases := []struct {
		name  string
		req   *http.Request
		want  outcome
		cause string
	}{
		{"valid RS256", bearer(rs(nil)), accept, ""},
		{"valid ES256", bearer(sign(t, gojwt.SigningMethodES256, ecKey, "ec1", p.claims(nil))), accept, ""},
		{"expired", bearer(rs(map[string]any{"exp": epoch.Add(-time.Minute).Unix()})), reject, "expired"},
		{"expired within the skew", bearer(rs(map[string]any{"exp": epoch.Add(-10 * time.Second).Unix()})), accept, ""},
		{"no exp", bearer(rs(map[string]any{"exp": nil})), reject, "required claim"},
		{"not yet valid", bearer(rs(map[string]any{"nbf": epoch.Add(time.Minute).Unix()})), reject, "not valid yet"},
		{"issued in the future", bearer(rs(map[string]any{"iat": epoch.Add(time.Hour).Unix()})), reject, "future"},
		{"wrong audience", bearer(rs(map[string]any{"aud": "another-api"})), reject, "audience"},
		{"audience in a list", bearer(rs(map[string]any{"aud": []string{"x", audience}})), accept, ""},
		{"wrong issuer passes", bearer(rs(map[string]any{"iss": "https://elsewhere.test"})), pass, ""},
		{"wrong key", bearer(sign(t, gojwt.SigningMethodRS256, rsaKey2, "k1", p.claims(nil))), reject, "signature"},
		{"RS256 under the EC kid", bearer(sign(t, gojwt.SigningMethodRS256, rsaKey, "ec1", p.claims(nil))), reject, "unknown"},
		{"alg none", bearer(b64([]byte(`{"alg":"none"}`)) + "." + b64([]byte(`{"iss":"`+p.URL+`","aud":"`+audience+`","exp":9999999999}`)) + "."), reject, "algorithm"},
		{"HS256 over the RSA public key", bearer(sign(t, gojwt.SigningMethodHS256, pub, "k1", p.claims(nil))), reject, "algorithm"},
		{"oversized", bearer(strings.Repeat("x", jwt.DefaultMaxTokenBytes+1)), reject, "too large"},
		{"two bearer tokens", header("Authorization", "Bearer "+rs(nil), "Authorization", "Bearer "+rs(nil)), reject, "more than one"},
		{"opaque token without introspection", bearer("opaque-123"), pass, ""},
		{"no header", httptest.NewRequest("GET", "/", nil), pass, ""},
		{"basic", header("Authorization", "Basic dTpw"), pass, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, err := s.Authenticate(tc.req)
			if got := classify(id, err); got != tc.want {
				t.Fatalf("%v (%v %v), want %v", got, id, err, tc.want)
			}
			if tc.cause != "" && !strings.Contains(err.Error(), tc.cause) {
				t.Errorf("%q does not say %q", err, tc.cause)
			}
		})
	}
	if n := p.count("/.well-known/openid-configuration"); n != 1 {
		t.Errorf("discovery ran %d times", n)
	}
	id, _ := s.Authenticate(bearer(rs(nil)))
	if id.Subject != "user-1" || id.Claims["scopes"].([]string)[0] != "agents:run" {
		t.Errorf("identity %+v", id)
	}
	if got := s.Challenge(nil); got != `Bearer realm="bread"` {
		t.Errorf("challenge %q", got)
	}
}

func TestOIDCUnknownKidRefetchIsRateLimited(t *testing.T) {
	p := newIDP(t)
	c := newClock()
	s := oidcStrategy(t, p, c, func(o *oauth2.Options) { o.MinRefetch = time.Minute })
	check := func(kid string, want outcome, fetches int) {
		t.Helper()
		key := rsaKey
		if kid != "k1" {
			key = rsaKey2
		}
		tok := sign(t, gojwt.SigningMethodRS256, key, kid, p.claims(map[string]any{"exp": c.Now().Add(time.Hour).Unix()}))
		if got := classify(s.Authenticate(bearer(tok))); got != want {
			t.Fatalf("kid %s: %v, want %v", kid, got, want)
		}
		if n := p.count("/jwks"); n != fetches {
			t.Fatalf("kid %s: %d JWKS fetches, want %d", kid, n, fetches)
		}
	}
	check("k1", accept, 1)
	check("k2", reject, 1)
	c.Advance(time.Minute)
	check("k2", reject, 2)
	check("k2", reject, 2)
	p.mu.Lock()
	p.keys = append(p.keys, jwkOf("k2", &rsaKey2.PublicKey))
	p.mu.Unlock()
	c.Advance(time.Minute)
	check("k2", accept, 3)
}

func TestDiscoveryFailure(t *testing.T) {
	p := newIDP(t)
	c := newClock()
	p.down.Store(true)
	s := oidcStrategy(t, p, c, nil)
	tok := sign(t, gojwt.SigningMethodRS256, rsaKey, "k1", p.claims(nil))
	for range 3 {
		if got := classify(s.Authenticate(bearer(tok))); got != failure {
			t.Fatalf("issuer down: %v", got)
		}
	}
	if n := p.count("/.well-known/openid-configuration"); n != 1 {
		t.Errorf("discovery tried %d times within MinRefetch", n)
	}
	p.down.Store(false)
	c.Advance(oauth2.DefaultMinRefetch)
	if got := classify(s.Authenticate(bearer(tok))); got != accept {
		t.Fatalf("issuer back: %v", got)
	}
	// A discovery document naming another issuer is refused by go-oidc.
	liar := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"issuer":"https://evil.test","jwks_uri":"https://evil.test/jwks"}`))
	}))
	defer liar.Close()
	s2, _ := oauth2.Strategy(oauth2.Options{Issuer: liar.URL, Audience: []string{audience}})
	tok = sign(t, gojwt.SigningMethodRS256, rsaKey, "k1", gojwt.MapClaims{"iss": liar.URL, "aud": audience, "exp": time.Now().Add(time.Hour).Unix()})
	if id, err := s2.Authenticate(bearer(tok)); classify(id, err) != failure || !strings.Contains(err.Error(), "issuer") {
		t.Fatalf("mismatched discovery: %v %v", id, err)
	}
}

func TestJWKSURLSkipsDiscovery(t *testing.T) {
	p := newIDP(t)
	c := newClock()
	s := oidcStrategy(t, p, c, func(o *oauth2.Options) { o.JWKSURL = p.URL + "/jwks"; o.Algorithms = []string{"RS256"} })
	if got := classify(s.Authenticate(bearer(sign(t, gojwt.SigningMethodRS256, rsaKey, "k1", p.claims(nil))))); got != accept {
		t.Fatal(got)
	}
	if got := classify(s.Authenticate(bearer(sign(t, gojwt.SigningMethodES256, ecKey, "ec1", p.claims(nil))))); got != reject {
		t.Fatalf("ES256 outside Algorithms: %v", got)
	}
	if n := p.count("/.well-known/openid-configuration"); n != 0 {
		t.Errorf("discovery ran %d times", n)
	}
}

func introspecting(t *testing.T, p *idp, c *clock, mod func(*oauth2.Options)) *oauth2.Authenticator {
	t.Helper()
	o := oauth2.Options{Issuer: p.URL, Audience: []string{audience}, Now: c.Now,
		Introspection: &oauth2.Introspection{ClientID: "bread", ClientSecret: "s3cret", CacheTTL: time.Minute}}
	if mod != nil {
		mod(&o)
	}
	s, err := oauth2.Strategy(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestIntrospection(t *testing.T) {
	p := newIDP(t)
	c := newClock()
	p.active["good"] = map[string]any{"active": true, "sub": "svc-1", "aud": audience, "scope": "a b", "exp": float64(epoch.Add(time.Hour).Unix())}
	p.active["short"] = map[string]any{"active": true, "username": "bob", "aud": []any{audience}, "exp": float64(epoch.Add(20 * time.Second).Unix())}
	p.active["other-aud"] = map[string]any{"active": true, "sub": "x", "aud": "elsewhere"}
	p.active["other-iss"] = map[string]any{"active": true, "sub": "x", "aud": audience, "iss": "https://elsewhere.test"}
	p.active["expired"] = map[string]any{"active": true, "sub": "x", "aud": audience, "exp": float64(epoch.Add(-time.Hour).Unix())}
	p.active["future"] = map[string]any{"active": true, "sub": "x", "aud": audience, "nbf": float64(epoch.Add(time.Hour).Unix())}
	s := introspecting(t, p, c, nil)

	for tok, want := range map[string]outcome{"good": accept, "short": accept, "revoked": reject, "other-aud": reject, "other-iss": reject, "expired": reject, "future": reject} {
		if got := classify(s.Authenticate(bearer(tok))); got != want {
			t.Errorf("%s: %v, want %v", tok, got, want)
		}
	}
	id, _ := s.Authenticate(bearer("good"))
	if id.Subject != "svc-1" || len(id.Claims["scopes"].([]string)) != 2 {
		t.Errorf("identity %+v", id)
	}
	if id, _ := s.Authenticate(bearer("short")); id.Subject != "bob" {
		t.Errorf("username fallback: %+v", id)
	}
	// Every answer above is cached, the negative ones too.
	if n := p.count("/introspect"); n != 7 {
		t.Errorf("%d introspection calls, want 7", n)
	}
	// The short token's answer is cached only until its exp (+ skew).
	c.Advance(55 * time.Second)
	_, _ = s.Authenticate(bearer("short"))
	_, _ = s.Authenticate(bearer("good"))
	if n := p.count("/introspect"); n != 8 {
		t.Errorf("%d calls after 55s, want 8 (short re-asked, good cached)", n)
	}
	// The TTL ends; a token revoked at the server is refused.
	delete(p.active, "good")
	c.Advance(10 * time.Second)
	if got := classify(s.Authenticate(bearer("good"))); got != reject {
		t.Errorf("revoked after the TTL: %v", got)
	}
}

func TestIntrospectionFailures(t *testing.T) {
	p := newIDP(t)
	c := newClock()
	p.active["good"] = map[string]any{"active": true, "sub": "svc", "aud": audience}
	p.down.Store(true)
	s := introspecting(t, p, c, func(o *oauth2.Options) { o.Introspection.URL = p.URL + "/introspect" })
	if got := classify(s.Authenticate(bearer("good"))); got != failure {
		t.Fatalf("endpoint down: %v", got)
	}
	p.down.Store(false)
	if got := classify(s.Authenticate(bearer("good"))); got != accept {
		t.Fatalf("a failure is not cached: %v", got)
	}
	wrong := introspecting(t, p, c, func(o *oauth2.Options) { o.Introspection.ClientSecret = "nope" })
	if got := classify(wrong.Authenticate(bearer("good"))); got != failure {
		t.Fatalf("bread's own credentials refused: %v", got)
	}
}

func TestIntrospectionConcurrentCallsShareOne(t *testing.T) {
	p := newIDP(t)
	c := newClock()
	p.active["t"] = map[string]any{"active": true, "sub": "svc", "aud": audience}
	s := introspecting(t, p, c, func(o *oauth2.Options) { o.Issuer = ""; o.Introspection.URL = p.URL + "/introspect" })
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if got := classify(s.Authenticate(bearer("t"))); got != accept {
				t.Errorf("%v", got)
			}
		})
	}
	wg.Wait()
	if n := p.count("/introspect"); n != 1 {
		t.Errorf("%d calls for one token", n)
	}
	// Without an Issuer, a JWT is introspected too.
	if got := classify(s.Authenticate(bearer(sign(t, gojwt.SigningMethodRS256, rsaKey, "k1", p.claims(nil))))); got != reject {
		t.Errorf("unknown JWT: %v", got)
	}
}

func TestSigner(t *testing.T) {
	p := newIDP(t)
	signer, err := oauth2.Signer(oauth2.ClientCredentials{TokenURL: p.URL + "/token", ClientID: "agent", ClientSecret: "agent-secret", Scopes: []string{"agents:run"}, Audience: audience})
	if err != nil {
		t.Fatal(err)
	}
	var first string
	for i := range 5 {
		h := http.Header{}
		if err := signer.Sign(t.Context(), h); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = h.Get("Authorization")
		} else if h.Get("Authorization") != first {
			t.Fatalf("token changed: %s then %s", first, h.Get("Authorization"))
		}
	}
	if first != "Bearer opaque-1" || p.count("/token") != 1 {
		t.Fatalf("%q after %d token calls", first, p.count("/token"))
	}
	// The signed request authenticates against the strategy.
	c := newClock()
	s := introspecting(t, p, c, nil)
	r := httptest.NewRequest("POST", "/agents/a/run", nil)
	_ = signer.Sign(t.Context(), r.Header)
	id, err := s.Authenticate(r)
	if err != nil || id == nil || id.Subject != "agent" || id.Claims["scopes"].([]string)[0] != "agents:run" {
		t.Fatalf("signed request: %+v %v", id, err)
	}
	// A token about to expire is replaced.
	p.mu.Lock()
	p.tokenLife = 1
	p.mu.Unlock()
	short, _ := oauth2.Signer(oauth2.ClientCredentials{TokenURL: p.URL + "/token", ClientID: "agent", ClientSecret: "agent-secret"})
	h1, h2 := http.Header{}, http.Header{}
	_ = short.Sign(t.Context(), h1)
	_ = short.Sign(t.Context(), h2)
	if h1.Get("Authorization") == h2.Get("Authorization") {
		t.Error("an expiring token was reused")
	}
	bad, _ := oauth2.Signer(oauth2.ClientCredentials{TokenURL: p.URL + "/token", ClientID: "agent", ClientSecret: "wrong"})
	if err := bad.Sign(t.Context(), http.Header{}); !errors.Is(err, &core.BreadError{Code: core.CodeCredentialUnavailable}) {
		t.Fatalf("refused credentials: %v", err)
	}
}

func TestOptionsAreValidated(t *testing.T) {
	for name, o := range map[string]oauth2.Options{
		"nothing":                  {},
		"issuer not a URL":         {Issuer: "issuer"},
		"JWKS without issuer":      {JWKSURL: "https://x/jwks", Introspection: &oauth2.Introspection{URL: "https://x/i", ClientID: "c"}},
		"HS256":                    {Issuer: "https://x", Algorithms: []string{"HS256"}},
		"none":                     {Issuer: "https://x", Algorithms: []string{"none"}},
		"introspection, no URL":    {Introspection: &oauth2.Introspection{ClientID: "c"}},
		"introspection, no client": {Issuer: "https://x", Introspection: &oauth2.Introspection{}},
		"cache TTL too long":       {Issuer: "https://x", Introspection: &oauth2.Introspection{ClientID: "c", CacheTTL: time.Hour}},
		"huge skew":                {Issuer: "https://x", ClockSkew: time.Hour},
		"empty audience":           {Issuer: "https://x", Audience: []string{""}},
	} {
		if _, err := oauth2.Strategy(o); !errors.Is(err, &core.BreadError{Code: core.CodeInvalidConfig}) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, c := range map[string]oauth2.ClientCredentials{
		"no URL":       {ClientID: "c"},
		"no client id": {TokenURL: "https://x/token"},
	} {
		if _, err := oauth2.Signer(c); !errors.Is(err, &core.BreadError{Code: core.CodeInvalidConfig}) {
			t.Errorf("signer %s: %v", name, err)
		}
	}
}

func header(kv ...string) *http.Request {
	r := httptest.NewRequest("GET", "/agents", nil)
	for i := 0; i+1 < len(kv); i += 2 {
		r.Header.Add(kv[i], kv[i+1])
	}
	return r
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
