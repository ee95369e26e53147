package jwt_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gojwt "github.com/golang-jwt/jwt/v5"
)

// Keys are generated once per test binary: RSA generation is slow.
var (
	keysOnce         sync.Once
	rsaKey, rsaKey2  *rsa.PrivateKey
	ecKey, ec384Key  *ecdsa.PrivateKey
	edPub            ed25519.PublicKey
	edKey            ed25519.PrivateKey
	secret           = []byte("0123456789abcdef0123456789abcdef") // 32 bytes
	issuer, audience = "https://issuer.test", "bread-api"
	epoch            = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
)

func genKeys(t testing.TB) {
	t.Helper()
	keysOnce.Do(func() {
		var err error
		if rsaKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if rsaKey2, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		ecKey, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		ec384Key, _ = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		edPub, edKey, _ = ed25519.GenerateKey(rand.Reader)
	})
}

// clock is a settable clock shared by a strategy and its key set.
type clock struct{ now atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.now.Store(epoch.UnixNano())
	return c
}
func (c *clock) Now() time.Time          { return time.Unix(0, c.now.Load()) }
func (c *clock) Advance(d time.Duration) { c.now.Add(int64(d)) }

// claims returns valid claims at epoch, with overrides (a nil value
// deletes).
func claims(over map[string]any) gojwt.MapClaims {
	c := gojwt.MapClaims{
		"iss":   issuer,
		"aud":   audience,
		"sub":   "alice",
		"iat":   epoch.Add(-time.Minute).Unix(),
		"nbf":   epoch.Add(-time.Minute).Unix(),
		"exp":   epoch.Add(time.Hour).Unix(),
		"scope": "agents:run sessions:read",
		"email": "alice@example.test",
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

// sign signs c with method and key, naming kid when not empty.
func sign(t testing.TB, method gojwt.SigningMethod, key any, kid string, c gojwt.MapClaims) string {
	t.Helper()
	tok := gojwt.NewWithClaims(method, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// unsigned builds a token from raw header and claims JSON and a signature.
func unsigned(header, payload, sig string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(header)) + "." + enc([]byte(payload)) + "." + sig
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// ecPoint is pub's coordinates, each padded to the curve's size, as a JWK
// carries them: Bytes is the uncompressed point 0x04 || X || Y.
func ecPoint(pub *ecdsa.PublicKey) (x, y []byte) {
	raw, err := pub.Bytes()
	if err != nil {
		panic(err) // a key the test generated
	}
	size := (len(raw) - 1) / 2
	return raw[1 : 1+size], raw[1+size:]
}

// jwkOf is the public JWK of pub.
func jwkOf(kid, alg string, pub crypto.PublicKey) map[string]any {
	m := map[string]any{"kid": kid, "use": "sig"}
	if alg != "" {
		m["alg"] = alg
	}
	switch p := pub.(type) {
	case *rsa.PublicKey:
		m["kty"], m["n"], m["e"] = "RSA", b64(p.N.Bytes()), b64(big.NewInt(int64(p.E)).Bytes())
	case *ecdsa.PublicKey:
		x, y := ecPoint(p)
		m["kty"], m["crv"], m["x"], m["y"] = "EC", p.Curve.Params().Name, b64(x), b64(y)
	case ed25519.PublicKey:
		m["kty"], m["crv"], m["x"] = "OKP", "Ed25519", b64(p)
	}
	return m
}

// jwksServer serves a key set that a test can change, counting fetches.
type jwksServer struct {
	*httptest.Server
	mu   sync.Mutex
	keys []map[string]any
	hits atomic.Int32
	fail atomic.Bool
}

func newJWKSServer(t *testing.T, keys ...map[string]any) *jwksServer {
	s := &jwksServer{keys: keys}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		if s.fail.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		s.mu.Lock()
		body, _ := json.Marshal(map[string]any{"keys": s.keys})
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/jwk-set+json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) set(keys ...map[string]any) {
	s.mu.Lock()
	s.keys = keys
	s.mu.Unlock()
}

func bearer(token string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/agents", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	return r
}
