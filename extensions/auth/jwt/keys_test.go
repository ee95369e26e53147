package jwt_test

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/breadai/bread/extensions/auth/jwt"
)

func jwksJSON(keys ...map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"keys": keys})
	return b
}

func TestParseJWKS(t *testing.T) {
	genKeys(t)
	set, err := jwt.ParseJWKS(jwksJSON(
		jwkOf("rsa", "RS256", &rsaKey.PublicKey),
		jwkOf("ec", "", &ecKey.PublicKey),
		jwkOf("ed", "", edPub),
		map[string]any{"kty": "oct", "kid": "hmac", "k": "c2VjcmV0"},                       // never from a set
		map[string]any{"kty": "RSA", "kid": "enc", "use": "enc", "n": "AQAB", "e": "AQAB"}, // not for signatures
		map[string]any{"kty": "OKP", "crv": "X25519", "x": b64(make([]byte, 32))},          // not a signature curve
		map[string]any{"kty": "EC", "crv": "secp256k1", "x": "AA", "y": "AA"},              // unknown curve
		map[string]any{"kty": "PQC", "kid": "future"},                                      // unknown type
		map[string]any{"kty": "RSA", "alg": "HS256", "n": "AQAB", "e": "AQAB"},             // HS alg on a set key
	))
	if err != nil {
		t.Fatal(err)
	}
	if len(set) != 3 || set[0].ID != "rsa" || set[0].Algorithm != "RS256" {
		t.Fatalf("set %+v", set)
	}
	if ks, _ := set.Keys(context.Background(), "ec"); len(ks) != 1 {
		t.Errorf("kid lookup: %v", ks)
	}
	if ks, _ := set.Keys(context.Background(), ""); len(ks) != 3 {
		t.Errorf("no kid: %v", ks)
	}

	offCurve := jwkOf("bad", "", &ecKey.PublicKey)
	offCurve["y"] = offCurve["x"]
	small, _ := rsa.GenerateKey(randReader{}, 1024)
	wrongAlg := jwkOf("ed", "ES256", edPub)
	shortX := map[string]any{"kty": "OKP", "crv": "Ed25519", "x": "AAAA"}
	for name, data := range map[string][]byte{
		"not JSON":          []byte("nope"),
		"no keys":           []byte(`{}`),
		"point off curve":   jwksJSON(offCurve),
		"1024-bit RSA":      jwksJSON(jwkOf("small", "", &small.PublicKey)),
		"even exponent":     jwksJSON(map[string]any{"kty": "RSA", "n": b64(rsaKey.N.Bytes()), "e": "Ag"}),
		"alg does not fit":  jwksJSON(wrongAlg),
		"short Ed25519 key": jwksJSON(shortX),
		"too many keys":     []byte(`{"keys":[` + strings.Repeat(`{"kty":"x"},`, jwt.MaxKeys) + `{"kty":"x"}]}`),
	} {
		if _, err := jwt.ParseJWKS(data); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestParsePEM(t *testing.T) {
	genKeys(t)
	pub := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: must(x509.MarshalPKIXPublicKey(&ecKey.PublicKey))})
	set, err := jwt.ParsePEM(append(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: must(x509.MarshalPKIXPublicKey(edPub))})...))
	if err != nil || len(set) != 2 {
		t.Fatalf("%v %v", set, err)
	}
	priv := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: must(x509.MarshalPKCS8PrivateKey(ecKey))})
	if _, err := jwt.ParsePEM(priv); err == nil || !strings.Contains(err.Error(), "public key only") {
		t.Errorf("a private key: %v", err)
	}
	if _, err := jwt.ParsePEM([]byte("nothing")); err == nil {
		t.Error("no block accepted")
	}
}

// randReader is a deterministic reader for a throwaway weak key.
type randReader struct{}

func (randReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(i*7 + 3)
	}
	return len(p), nil
}
