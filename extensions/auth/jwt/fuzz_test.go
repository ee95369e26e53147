package jwt_test

import (
	"strings"
	"testing"

	gojwt "github.com/golang-jwt/jwt/v5"

	"github.com/breadai/bread/extensions/auth/jwt"
)

// FuzzAuthenticate feeds arbitrary Authorization values to a strategy with
// static keys: it must never panic, never fail to check (only accept, pass
// or reject), and accept only a token it could have signed.
func FuzzAuthenticate(f *testing.F) {
	c := newClock()
	valid := sign(f, gojwt.SigningMethodHS256, secret, "", claims(nil))
	for _, seed := range []string{
		"Bearer " + valid,
		"bearer " + valid,
		"Bearer " + tamper(valid),
		"Bearer " + unsigned(`{"alg":"none"}`, `{"iss":"`+issuer+`"}`, ""),
		"Bearer " + unsigned(`{"alg":"HS256","crit":["b64"]}`, `{}`, "x"),
		"Bearer e30.e30.",
		"Bearer ..",
		"Bearer a.b.c.d",
		"Basic dXNlcjpwYXNz",
		"Bearer",
		"Bearer " + strings.Repeat("A", 9000),
		"",
	} {
		f.Add(seed)
	}
	s, err := jwt.Strategy(jwt.Options{Secret: secret, Issuer: issuer, Audience: []string{audience}, Now: c.Now})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, value string) {
		r := header("Authorization", value)
		id, err := s.Authenticate(r)
		switch classify(id, err) {
		case failure:
			t.Fatalf("%q: failure %v", value, err)
		case accept:
			// Only a genuine token passes: re-verify independently.
			tok := strings.TrimSpace(value)
			tok = strings.TrimSpace(tok[len("Bearer"):])
			if _, perr := gojwt.Parse(tok, func(*gojwt.Token) (any, error) { return secret, nil },
				gojwt.WithValidMethods([]string{"HS256"}), gojwt.WithTimeFunc(c.Now), gojwt.WithLeeway(jwt.DefaultClockSkew)); perr != nil {
				t.Fatalf("%q accepted but does not verify: %v", value, perr)
			}
		}
	})
}

// FuzzPeekJWT checks the pre-verification reader never panics and only
// calls JWT-shaped input a JWT.
func FuzzPeekJWT(f *testing.F) {
	for _, seed := range []string{"e30.e30.", "eyJhbGciOiJIUzI1NiJ9.e30.c2ln", "a.b", "....", "eyJhbGciOjF9.e30.", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, token string) {
		_, ok, err := jwt.PeekJWT(token)
		if ok && strings.Count(token, ".") != 2 {
			t.Fatalf("%q taken for a JWT", token)
		}
		if !ok && err != nil {
			t.Fatalf("%q: error without a JWT: %v", token, err)
		}
	})
}

// FuzzParseJWKS checks the key-set parser never panics and never returns a
// key it cannot use.
func FuzzParseJWKS(f *testing.F) {
	genKeys(f)
	f.Add(jwksJSON(jwkOf("rsa", "RS256", &rsaKey.PublicKey), jwkOf("ec", "", &ecKey.PublicKey), jwkOf("ed", "EdDSA", edPub)))
	f.Add([]byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}]}`))
	f.Add([]byte(`{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}`))
	f.Add([]byte(`{"keys":[{"kty":"oct","k":"AA"}]}`))
	f.Add([]byte(`{"keys":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := jwt.ParseJWKS(data)
		if err != nil {
			return
		}
		for _, k := range set {
			if k.Public == nil {
				t.Fatalf("a key without a public part: %+v", k)
			}
		}
	})
}
