package oauth2_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gojwt "github.com/golang-jwt/jwt/v5"
)

var (
	keysOnce        sync.Once
	rsaKey, rsaKey2 *rsa.PrivateKey
	ecKey           *ecdsa.PrivateKey
	epoch           = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
)

const audience = "bread-api"

func genKeys() {
	keysOnce.Do(func() {
		rsaKey, _ = rsa.GenerateKey(rand.Reader, 2048)
		rsaKey2, _ = rsa.GenerateKey(rand.Reader, 2048)
		ecKey, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	})
}

type clock struct{ now atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.now.Store(epoch.UnixNano())
	return c
}
func (c *clock) Now() time.Time          { return time.Unix(0, c.now.Load()) }
func (c *clock) Advance(d time.Duration) { c.now.Add(int64(d)) }

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func jwkOf(kid string, pub crypto.PublicKey) map[string]any {
	switch p := pub.(type) {
	case *rsa.PublicKey:
		return map[string]any{"kty": "RSA", "kid": kid, "n": b64(p.N.Bytes()), "e": b64(big.NewInt(int64(p.E)).Bytes())}
	case *ecdsa.PublicKey:
		// Bytes is the uncompressed point 0x04 || X || Y.
		raw, err := p.Bytes()
		if err != nil {
			panic(err) // a key the test generated
		}
		return map[string]any{"kty": "EC", "kid": kid, "crv": "P-256", "x": b64(raw[1:33]), "y": b64(raw[33:])}
	}
	return nil
}

// idp is a local OpenID provider: discovery, JWKS, introspection and a
// client-credentials token endpoint, counting every call.
type idp struct {
	*httptest.Server
	mu        sync.Mutex
	keys      []map[string]any
	active    map[string]map[string]any // introspection answers by token
	hits      map[string]int
	down      atomic.Bool
	tokenLife int
	issued    atomic.Int32
}

func newIDP(t *testing.T) *idp {
	genKeys()
	p := &idp{keys: []map[string]any{jwkOf("k1", &rsaKey.PublicKey), jwkOf("ec1", &ecKey.PublicKey)}, active: map[string]map[string]any{}, hits: map[string]int{}, tokenLife: 3600}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

func (p *idp) count(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits[path]
}

func (p *idp) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.hits[r.URL.Path]++
	p.mu.Unlock()
	if p.down.Load() {
		http.Error(w, "down", http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/.well-known/openid-configuration":
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": p.URL, "jwks_uri": p.URL + "/jwks", "introspection_endpoint": p.URL + "/introspect",
			"token_endpoint": p.URL + "/token", "authorization_endpoint": p.URL + "/authorize",
			"id_token_signing_alg_values_supported": []string{"RS256", "ES256", "HS256"},
		})
	case "/jwks":
		p.mu.Lock()
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": p.keys})
		p.mu.Unlock()
	case "/introspect":
		id, secret, ok := r.BasicAuth()
		if !ok || id != "bread" || secret != "s3cret" || r.PostFormValue("token") == "" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		p.mu.Lock()
		ans, ok := p.active[r.PostFormValue("token")]
		p.mu.Unlock()
		if !ok {
			ans = map[string]any{"active": false}
		}
		_ = json.NewEncoder(w).Encode(ans)
	case "/token":
		id, secret, _ := r.BasicAuth()
		if r.PostFormValue("grant_type") != "client_credentials" || id != "agent" || secret != "agent-secret" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		n := p.issued.Add(1)
		tok := "opaque-" + strconv.Itoa(int(n))
		p.mu.Lock()
		p.active[tok] = map[string]any{"active": true, "client_id": "agent", "scope": r.PostFormValue("scope"), "aud": r.PostFormValue("audience")}
		life := p.tokenLife
		p.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": life})
	default:
		http.NotFound(w, r)
	}
}

// claims are valid claims from this issuer at epoch, with overrides (nil
// deletes).
func (p *idp) claims(over map[string]any) gojwt.MapClaims {
	c := gojwt.MapClaims{
		"iss": p.URL, "aud": audience, "sub": "user-1", "scope": "agents:run",
		"iat": epoch.Add(-time.Minute).Unix(), "exp": epoch.Add(time.Hour).Unix(),
	}
	for k, v := range over {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func sign(t *testing.T, m gojwt.SigningMethod, key any, kid string, c gojwt.MapClaims) string {
	t.Helper()
	tok := gojwt.NewWithClaims(m, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
