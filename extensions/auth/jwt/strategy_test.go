package jwt_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	gojwt "github.com/golang-jwt/jwt/v5"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/extensions/auth/jwt"
)

// outcome of one Authenticate call.
type outcome int

const (
	pass    outcome = iota // nil, nil: not this strategy's credential
	accept                 // an identity
	reject                 // a rejection: 401, no further strategy
	failure                // an error that is not a rejection: 500
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

func hsStrategy(t *testing.T, c *clock, mod func(*jwt.Options)) *jwt.Authenticator {
	t.Helper()
	o := jwt.Options{Secret: secret, Issuer: issuer, Audience: []string{audience}, Now: c.Now}
	if mod != nil {
		mod(&o)
	}
	s, err := jwt.Strategy(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestHS256Matrix(t *testing.T) {
	genKeys(t)
	c := newClock()
	s := hsStrategy(t, c, nil)
	hs := func(over map[string]any) string { return sign(t, gojwt.SigningMethodHS256, secret, "", claims(over)) }
	rsaPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: must(x509.MarshalPKIXPublicKey(&rsaKey.PublicKey))})
	cases := []struct {
		name  string
		req   *http.Request
		want  outcome
		cause string // in the rejection's description
	}{
		{"valid", bearer(hs(nil)), accept, ""},
		{"expired", bearer(hs(map[string]any{"exp": epoch.Add(-time.Minute).Unix()})), reject, "expired"},
		{"expired within the skew", bearer(hs(map[string]any{"exp": epoch.Add(-10 * time.Second).Unix()})), accept, ""},
		{"not yet valid", bearer(hs(map[string]any{"nbf": epoch.Add(time.Minute).Unix()})), reject, "not valid yet"},
		{"nbf within the skew", bearer(hs(map[string]any{"nbf": epoch.Add(10 * time.Second).Unix()})), accept, ""},
		{"issued in the future", bearer(hs(map[string]any{"iat": epoch.Add(time.Hour).Unix()})), reject, "future"},
		{"wrong audience", bearer(hs(map[string]any{"aud": "other-api"})), reject, "audience"},
		{"audience in a list", bearer(hs(map[string]any{"aud": []string{"x", audience}})), accept, ""},
		{"no audience", bearer(hs(map[string]any{"aud": nil})), reject, "required claim"},
		{"wrong issuer passes to the next strategy", bearer(hs(map[string]any{"iss": "https://other.test"})), pass, ""},
		{"no issuer passes", bearer(hs(map[string]any{"iss": nil})), pass, ""},
		{"wrong key", bearer(sign(t, gojwt.SigningMethodHS256, []byte("another-secret-of-thirty-two-byt"), "", claims(nil))), reject, "signature"},
		{"no exp", bearer(hs(map[string]any{"exp": nil})), reject, "required claim"},
		{"HS384 is not in the default list", bearer(sign(t, gojwt.SigningMethodHS384, []byte(strings.Repeat("k", 48)), "", claims(nil))), reject, "algorithm"},
		{"alg none", bearer(unsigned(`{"alg":"none","typ":"JWT"}`, `{"iss":"`+issuer+`","aud":"`+audience+`","exp":9999999999}`, "")), reject, "algorithm"},
		{"alg None", bearer(unsigned(`{"alg":"None"}`, `{"iss":"`+issuer+`"}`, "")), reject, "algorithm"},
		{"RS256 to an HMAC-only strategy", bearer(sign(t, gojwt.SigningMethodRS256, rsaKey, "", claims(nil))), reject, "algorithm"},
		{"HS256 signed with an RSA public key", bearer(sign(t, gojwt.SigningMethodHS256, rsaPEM, "", claims(nil))), reject, "signature"},
		{"crit header", bearer(signWithHeader(t, map[string]any{"crit": []string{"exp"}})), reject, "critical"},
		{"tampered payload", bearer(tamper(hs(nil))), reject, "signature"},
		{"payload not JSON", bearer(unsigned(`{"alg":"HS256"}`, `not json`, "c2ln")), reject, "malformed"},
		{"bad signature encoding", bearer(hs(nil)[:len(hs(nil))-2] + "!!"), pass, ""},
		{"oversized", bearer(strings.Repeat("a", jwt.DefaultMaxTokenBytes) + "." + hs(nil)), reject, "too large"},
		{"no header", httptest.NewRequest("GET", "/", nil), pass, ""},
		{"other scheme", header("Authorization", "Basic "+hs(nil)), pass, ""},
		{"scheme alone", header("Authorization", "Bearer"), pass, ""},
		{"scheme and spaces", header("Authorization", "Bearer   "), pass, ""},
		{"lower-case scheme", header("Authorization", "bearer "+hs(nil)), accept, ""},
		{"an API key", header("Authorization", "Bearer sk-live-123"), pass, ""},
		{"two dots, not base64url", header("Authorization", "Bearer a.b c.d"), pass, ""},
		{"header not JSON", header("Authorization", "Bearer "+b64([]byte("nope"))+".e30.c2ln"), pass, ""},
		{"two bearer headers", header("Authorization", "Bearer "+hs(nil), "Authorization", "Bearer "+hs(nil)), reject, "more than one"},
		{"bearer and basic", header("Authorization", "Basic eDp5", "Authorization", "Bearer "+hs(nil)), accept, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, err := s.Authenticate(tc.req)
			if got := classify(id, err); got != tc.want {
				t.Fatalf("outcome %v (%v, %v), want %v", got, id, err, tc.want)
			}
			if tc.cause != "" && !strings.Contains(err.Error(), tc.cause) {
				t.Errorf("rejection %q does not say %q", err, tc.cause)
			}
		})
	}
}

func TestIdentity(t *testing.T) {
	c := newClock()
	tok := sign(t, gojwt.SigningMethodHS256, secret, "", claims(map[string]any{"scp": []string{"loops:read", "agents:run"}}))
	id, err := hsStrategy(t, c, nil).Authenticate(bearer(tok))
	if err != nil || id == nil {
		t.Fatal(id, err)
	}
	if id.Subject != "alice" || id.Claims["email"] != "alice@example.test" || id.Claims["iss"] != issuer {
		t.Errorf("identity %+v", id)
	}
	if got := id.Claims["scopes"]; !slices.Equal(got.([]string), []string{"agents:run", "loops:read", "sessions:read"}) {
		t.Errorf("scopes %v", got)
	}
	// Chosen claims only, and another subject claim.
	s := hsStrategy(t, c, func(o *jwt.Options) { o.Claims = []string{"email"}; o.SubjectClaim = "email" })
	id, _ = s.Authenticate(bearer(tok))
	if id.Subject != "alice@example.test" || len(id.Claims) != 2 || id.Claims["iss"] != nil || id.Claims["scopes"] == nil {
		t.Errorf("chosen claims %+v", id)
	}
	// No sub: the TypeScript fallback subject.
	id, _ = hsStrategy(t, c, nil).Authenticate(bearer(sign(t, gojwt.SigningMethodHS256, secret, "", claims(map[string]any{"sub": nil}))))
	if id == nil || id.Subject != jwt.DefaultSubject {
		t.Errorf("no sub: %+v", id)
	}
}

func TestClockSkewAndExpiryOptions(t *testing.T) {
	c := newClock()
	tok := sign(t, gojwt.SigningMethodHS256, secret, "", claims(map[string]any{"exp": epoch.Add(-2 * time.Minute).Unix()}))
	if got := classify(hsStrategy(t, c, func(o *jwt.Options) { o.ClockSkew = 3 * time.Minute }).Authenticate(bearer(tok))); got != accept {
		t.Errorf("3m skew on a token 2m expired: %v", got)
	}
	noExp := sign(t, gojwt.SigningMethodHS256, secret, "", claims(map[string]any{"exp": nil}))
	if got := classify(hsStrategy(t, c, func(o *jwt.Options) { o.AllowMissingExpiry = true }).Authenticate(bearer(noExp))); got != accept {
		t.Errorf("AllowMissingExpiry: %v", got)
	}
	// Time moves: the valid token expires an hour later.
	s := hsStrategy(t, c, nil)
	valid := sign(t, gojwt.SigningMethodHS256, secret, "", claims(nil))
	c.Advance(time.Hour + time.Minute)
	if got := classify(s.Authenticate(bearer(valid))); got != reject {
		t.Errorf("after an hour: %v", got)
	}
}

func TestCustomHeader(t *testing.T) {
	c := newClock()
	s := hsStrategy(t, c, func(o *jwt.Options) { o.Header = "x-token" })
	tok := sign(t, gojwt.SigningMethodHS256, secret, "", claims(nil))
	if got := classify(s.Authenticate(header("X-Token", tok))); got != accept {
		t.Errorf("raw header: %v", got)
	}
	if got := classify(s.Authenticate(bearer(tok))); got != pass {
		t.Errorf("Authorization is not read: %v", got)
	}
}

func TestAsymmetricAlgorithms(t *testing.T) {
	genKeys(t)
	c := newClock()
	srv := newJWKSServer(t,
		jwkOf("rsa", "", &rsaKey.PublicKey),
		jwkOf("ec", "ES256", &ecKey.PublicKey),
		jwkOf("ec384", "", &ec384Key.PublicKey),
		jwkOf("ed", "EdDSA", edPub),
	)
	keys, err := jwt.NewRemoteJWKS(srv.URL, jwt.JWKSOptions{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	s, err := jwt.Strategy(jwt.Options{Keys: keys, Issuer: issuer, Audience: []string{audience}, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		method gojwt.SigningMethod
		key    any
		kid    string
		want   outcome
	}{
		{"RS256", gojwt.SigningMethodRS256, rsaKey, "rsa", accept},
		{"RS512", gojwt.SigningMethodRS512, rsaKey, "rsa", accept},
		{"PS256", gojwt.SigningMethodPS256, rsaKey, "rsa", accept},
		{"ES256", gojwt.SigningMethodES256, ecKey, "ec", accept},
		{"ES384", gojwt.SigningMethodES384, ec384Key, "ec384", accept},
		{"EdDSA", gojwt.SigningMethodEdDSA, edKey, "ed", accept},
		{"no kid: every fitting key is tried", gojwt.SigningMethodES256, ecKey, "", accept},
		{"wrong key under a known kid", gojwt.SigningMethodRS256, rsaKey2, "rsa", reject},
		{"ES384 under an ES256 key's kid", gojwt.SigningMethodES384, ec384Key, "ec", reject},
		{"RS256 under an EC kid", gojwt.SigningMethodRS256, rsaKey, "ec", reject},
		{"HS256 over the RSA public key (confusion)", gojwt.SigningMethodHS256, must(x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)), "rsa", reject},
		{"HS256 over the JWK's modulus", gojwt.SigningMethodHS256, rsaKey.PublicKey.N.Bytes(), "rsa", reject},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := s.Authenticate(bearer(sign(t, tc.method, tc.key, tc.kid, claims(nil))))
			if got := classify(id, err); got != tc.want {
				t.Fatalf("%v (%v), want %v", got, err, tc.want)
			}
		})
	}
	if n := srv.hits.Load(); n != 1 {
		t.Errorf("the set was fetched %d times, want once", n)
	}
}

// TestAlgorithmConfusionWithBothKinds: with a secret and public keys
// configured, an HS256 token is checked against the secret only, never
// against a public key's bytes.
func TestAlgorithmConfusionWithBothKinds(t *testing.T) {
	genKeys(t)
	c := newClock()
	der := must(x509.MarshalPKIXPublicKey(&rsaKey.PublicKey))
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	keys, err := jwt.ParsePEM(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	s := hsStrategy(t, c, func(o *jwt.Options) { o.Keys = keys; o.Algorithms = []string{"HS256", "RS256"} })
	for _, key := range [][]byte{der, pemBytes} {
		if got := classify(s.Authenticate(bearer(sign(t, gojwt.SigningMethodHS256, key, "", claims(nil))))); got != reject {
			t.Errorf("HS256 over the public key: %v", got)
		}
	}
	for _, tok := range []string{sign(t, gojwt.SigningMethodHS256, secret, "", claims(nil)), sign(t, gojwt.SigningMethodRS256, rsaKey, "", claims(nil))} {
		if got := classify(s.Authenticate(bearer(tok))); got != accept {
			t.Errorf("a genuine token: %v", got)
		}
	}
}

func TestUnknownKidRefetchIsRateLimited(t *testing.T) {
	genKeys(t)
	c := newClock()
	srv := newJWKSServer(t, jwkOf("k1", "RS256", &rsaKey.PublicKey))
	keys, _ := jwt.NewRemoteJWKS(srv.URL, jwt.JWKSOptions{Now: c.Now, MinRefetch: time.Minute, Refresh: time.Hour})
	s, _ := jwt.Strategy(jwt.Options{Keys: keys, Issuer: issuer, Audience: []string{audience}, Now: c.Now})
	check := func(kid string, key any, want outcome, hits int32) {
		t.Helper()
		tok := sign(t, gojwt.SigningMethodRS256, key, kid, claims(map[string]any{"exp": c.Now().Add(time.Hour).Unix()}))
		id, err := s.Authenticate(bearer(tok))
		if got := classify(id, err); got != want {
			t.Fatalf("kid %s: %v (%v), want %v", kid, got, err, want)
		}
		if n := srv.hits.Load(); hits >= 0 && n != hits {
			t.Fatalf("kid %s: %d fetches, want %d", kid, n, hits)
		}
	}
	check("k1", rsaKey, accept, 1)
	check("k2", rsaKey2, reject, 1) // unknown, but the set was fetched under a minute ago
	c.Advance(time.Minute)
	check("k2", rsaKey2, reject, 2) // unknown: one refetch, still unknown
	check("k2", rsaKey2, reject, 2) // and no second one within the minute
	check("k3", rsaKey2, reject, 2) // nor for another kid
	// The issuer rotates to k2.
	srv.set(jwkOf("k1", "RS256", &rsaKey.PublicKey), jwkOf("k2", "RS256", &rsaKey2.PublicKey))
	c.Advance(time.Minute)
	check("k2", rsaKey2, accept, 3)
	check("k1", rsaKey, accept, 3)
	// A refresh after the hour happens in the background; the old set
	// answers meanwhile.
	c.Advance(time.Hour)
	check("k1", rsaKey, accept, -1)
	waitFor(t, func() bool { return srv.hits.Load() == 4 })
}

func TestJWKSUnavailable(t *testing.T) {
	genKeys(t)
	c := newClock()
	srv := newJWKSServer(t, jwkOf("k1", "RS256", &rsaKey.PublicKey))
	srv.fail.Store(true)
	keys, _ := jwt.NewRemoteJWKS(srv.URL, jwt.JWKSOptions{Now: c.Now})
	s, _ := jwt.Strategy(jwt.Options{Keys: keys, Issuer: issuer, Audience: []string{audience}, Now: c.Now})
	tok := sign(t, gojwt.SigningMethodRS256, rsaKey, "k1", claims(nil))
	id, err := s.Authenticate(bearer(tok))
	if classify(id, err) != failure || !errors.Is(err, jwt.ErrKeysUnavailable) {
		t.Fatalf("issuer down: %v %v", id, err)
	}
	// A second request within MinRefetch does not hit the issuer again.
	_, _ = s.Authenticate(bearer(tok))
	if n := srv.hits.Load(); n != 1 {
		t.Errorf("%d fetches while down, want 1", n)
	}
	srv.fail.Store(false)
	c.Advance(jwt.DefaultJWKSMinRefetch)
	if got := classify(s.Authenticate(bearer(tok))); got != accept {
		t.Fatalf("issuer back: %v", got)
	}
	// Down again at the refresh: the old set keeps working.
	srv.fail.Store(true)
	c.Advance(jwt.DefaultJWKSRefresh)
	tok = sign(t, gojwt.SigningMethodRS256, rsaKey, "k1", claims(map[string]any{"exp": c.Now().Add(time.Hour).Unix()}))
	for range 3 {
		if got := classify(s.Authenticate(bearer(tok))); got != accept {
			t.Fatalf("stale set: %v", got)
		}
	}
}

func TestJWKSBounds(t *testing.T) {
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"keys":[` + strings.Repeat(" ", 2<<20) + `]}`))
	}))
	defer big.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer slow.Close()
	for name, url := range map[string]string{"too large": big.URL, "too slow": slow.URL} {
		keys, _ := jwt.NewRemoteJWKS(url, jwt.JWKSOptions{Timeout: 200 * time.Millisecond})
		start := time.Now()
		if _, err := keys.Keys(context.Background(), "k"); !errors.Is(err, jwt.ErrKeysUnavailable) {
			t.Errorf("%s: %v", name, err)
		}
		if time.Since(start) > 5*time.Second {
			t.Errorf("%s: took %v", name, time.Since(start))
		}
	}
	// A waiting caller leaves with its context.
	keys, _ := jwt.NewRemoteJWKS(slow.URL, jwt.JWKSOptions{Timeout: 2 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := keys.Keys(ctx, ""); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled caller: %v", err)
	}
}

func TestOversizedTokenIsRefusedBeforeKeyLookup(t *testing.T) {
	genKeys(t)
	srv := newJWKSServer(t, jwkOf("k1", "RS256", &rsaKey.PublicKey))
	keys, _ := jwt.NewRemoteJWKS(srv.URL, jwt.JWKSOptions{})
	s, _ := jwt.Strategy(jwt.Options{Keys: keys, Issuer: issuer, MaxTokenBytes: 1024})
	tok := sign(t, gojwt.SigningMethodRS256, rsaKey, "k1", claims(map[string]any{"pad": strings.Repeat("x", 2048)}))
	id, err := s.Authenticate(bearer(tok))
	if classify(id, err) != reject || srv.hits.Load() != 0 {
		t.Fatalf("oversized: %v %v, %d fetches", id, err, srv.hits.Load())
	}
}

func TestChallenge(t *testing.T) {
	s := hsStrategy(t, newClock(), func(o *jwt.Options) { o.Realm = `my "api"` })
	if got := s.Challenge(nil); got != `Bearer realm="my \"api\""` {
		t.Errorf("no token: %s", got)
	}
	_, err := s.Authenticate(bearer(sign(t, gojwt.SigningMethodHS256, secret, "", claims(map[string]any{"exp": epoch.Add(-time.Hour).Unix()}))))
	if got := s.Challenge(err); got != `Bearer realm="my \"api\"", error="invalid_token", error_description="the token has expired"` {
		t.Errorf("expired: %s", got)
	}
	_, err = s.Authenticate(header("Authorization", "Bearer a.b.c", "Authorization", "Bearer d.e.f"))
	if got := s.Challenge(err); !strings.Contains(got, `error="invalid_request"`) {
		t.Errorf("two tokens: %s", got)
	}
}

func TestOptionsAreValidated(t *testing.T) {
	keys := jwt.StaticKeys{}
	for name, o := range map[string]jwt.Options{
		"no key":                    {Issuer: issuer},
		"no issuer or audience":     {Secret: secret},
		"short secret":              {Secret: []byte("short"), Issuer: issuer},
		"HS512 with a 32-byte key":  {Secret: secret, Issuer: issuer, Algorithms: []string{"HS512"}},
		"none":                      {Secret: secret, Issuer: issuer, Algorithms: []string{"none"}},
		"unknown alg":               {Secret: secret, Issuer: issuer, Algorithms: []string{"RS1"}},
		"RS256 without keys":        {Secret: secret, Issuer: issuer, Algorithms: []string{"RS256"}},
		"HS256 without secret":      {Keys: keys, Issuer: issuer, Algorithms: []string{"HS256"}},
		"huge skew":                 {Secret: secret, Issuer: issuer, ClockSkew: time.Hour},
		"negative skew":             {Secret: secret, Issuer: issuer, ClockSkew: -time.Second},
		"bad header":                {Secret: secret, Issuer: issuer, Header: "x token"},
		"bad scheme":                {Secret: secret, Issuer: issuer, Scheme: "Bearer x"},
		"empty audience":            {Secret: secret, Audience: []string{" "}},
		"negative max token length": {Secret: secret, Issuer: issuer, MaxTokenBytes: -1},
	} {
		if _, err := jwt.Strategy(o); !errors.Is(err, &core.BreadError{Code: core.CodeInvalidConfig}) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := jwt.Strategy(jwt.Options{Secret: secret, AllowUnverifiedIssuerAudience: true}); err != nil {
		t.Errorf("explicitly unscoped: %v", err)
	}
	for _, u := range []string{"", "ftp://x/jwks", "/jwks.json", "https://"} {
		if _, err := jwt.NewRemoteJWKS(u, jwt.JWKSOptions{}); err == nil {
			t.Errorf("JWKS URL %q accepted", u)
		}
	}
}

func header(kv ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/agents", nil)
	for i := 0; i+1 < len(kv); i += 2 {
		r.Header.Add(kv[i], kv[i+1])
	}
	return r
}

func signWithHeader(t *testing.T, extra map[string]any) string {
	tok := gojwt.NewWithClaims(gojwt.SigningMethodHS256, claims(nil))
	for k, v := range extra {
		tok.Header[k] = v
	}
	s, err := tok.SignedString(secret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tamper swaps the payload for one granting another subject, keeping the
// signature.
func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	parts[1] = b64([]byte(`{"iss":"` + issuer + `","aud":"` + audience + `","sub":"root","exp":9999999999}`))
	return strings.Join(parts, ".")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
