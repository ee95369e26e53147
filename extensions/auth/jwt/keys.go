package jwt

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// Key is one public verification key.
type Key struct {
	// ID is the JWK kid ("" when the key has none).
	ID string
	// Algorithm, when set, is the only alg the key verifies (the JWK alg).
	Algorithm string
	// Public is an *rsa.PublicKey, an *ecdsa.PublicKey or an
	// ed25519.PublicKey.
	Public crypto.PublicKey
}

// KeySource finds the public keys that may have signed a token.
type KeySource interface {
	// Keys returns the keys whose ID is kid, or every key when kid is "".
	// No key is an empty result, not an error; an error means the keys
	// could not be obtained at all (the server answers 500, not 401).
	Keys(ctx context.Context, kid string) ([]Key, error)
}

// ErrKeysUnavailable wraps a key source's failure to produce any keys.
var ErrKeysUnavailable = errors.New("jwt: verification keys unavailable")

// StaticKeys is a fixed key set.
type StaticKeys []Key

// Keys implements KeySource.
func (s StaticKeys) Keys(_ context.Context, kid string) ([]Key, error) {
	return pick(s, kid), nil
}

func pick(keys []Key, kid string) []Key {
	if kid == "" {
		return keys
	}
	var out []Key
	for _, k := range keys {
		if k.ID == kid {
			out = append(out, k)
		}
	}
	return out
}

// MaxKeys bounds a key set: a JWKS with more keys is refused.
const MaxKeys = 256

// MinRSABits is the smallest RSA modulus accepted.
const MinRSABits = 2048

// ParseJWKS reads a JSON Web Key Set (RFC 7517). It keeps the public
// signature keys it understands (RSA, EC P-256/P-384/P-521, OKP Ed25519) and
// skips, as §5 of the RFC asks, keys of other types or curves, keys whose
// use is not "sig" and symmetric (oct) keys: an HMAC secret never comes
// from a key set. A key it understands but finds malformed (a point off its
// curve, an RSA modulus under 2048 bits) fails the whole set.
func ParseJWKS(data []byte) (StaticKeys, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("jwt: JWKS: %w", err)
	}
	if set.Keys == nil {
		return nil, errors.New(`jwt: JWKS: no "keys" array`)
	}
	if len(set.Keys) > MaxKeys {
		return nil, fmt.Errorf("jwt: JWKS: %d keys, more than %d", len(set.Keys), MaxKeys)
	}
	out := StaticKeys{}
	for i, raw := range set.Keys {
		k, ok, err := parseJWK(raw)
		if err != nil {
			return nil, fmt.Errorf("jwt: JWKS key %d: %w", i, err)
		}
		if ok {
			out = append(out, k)
		}
	}
	return out, nil
}

type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

func parseJWK(raw json.RawMessage) (Key, bool, error) {
	var j jwk
	if err := json.Unmarshal(raw, &j); err != nil {
		return Key{}, false, err
	}
	if j.Use != "" && j.Use != "sig" {
		return Key{}, false, nil
	}
	if j.Alg != "" && !asymmetric(j.Alg) {
		return Key{}, false, nil // "none", HS* or an algorithm we do not verify
	}
	k := Key{ID: j.Kid, Algorithm: j.Alg}
	switch j.Kty {
	case "RSA":
		n, err := b64int(j.N)
		if err != nil {
			return k, false, fmt.Errorf("n: %w", err)
		}
		e, err := b64int(j.E)
		if err != nil {
			return k, false, fmt.Errorf("e: %w", err)
		}
		if n.BitLen() < MinRSABits || n.BitLen() > 16384 {
			return k, false, fmt.Errorf("RSA modulus of %d bits", n.BitLen())
		}
		if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || e.Bit(0) == 0 {
			return k, false, errors.New("RSA exponent out of range")
		}
		k.Public = &rsa.PublicKey{N: n, E: int(e.Int64())}
	case "EC":
		var curve elliptic.Curve
		switch j.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return k, false, nil
		}
		size := (curve.Params().BitSize + 7) / 8
		x, errX := base64.RawURLEncoding.DecodeString(j.X)
		y, errY := base64.RawURLEncoding.DecodeString(j.Y)
		if errX != nil || errY != nil || len(x) != size || len(y) != size {
			return k, false, errors.New("EC coordinates malformed")
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...))
		if err != nil {
			return k, false, err
		}
		k.Public = pub
	case "OKP":
		if j.Crv != "Ed25519" {
			return k, false, nil
		}
		x, err := base64.RawURLEncoding.DecodeString(j.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return k, false, errors.New("Ed25519 key malformed")
		}
		k.Public = ed25519.PublicKey(x)
	default:
		return k, false, nil // oct, or a type we do not know
	}
	if k.Algorithm != "" && !fits(k.Algorithm, k.Public) {
		return k, false, fmt.Errorf("alg %s does not fit a %s key", k.Algorithm, j.Kty)
	}
	return k, true, nil
}

func b64int(s string) (*big.Int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, errors.New("empty")
	}
	return new(big.Int).SetBytes(b), nil
}

// ParsePEM reads PEM "PUBLIC KEY" blocks (PKIX: RSA, ECDSA or Ed25519) and
// certificates; the keys have no ID, so a token is checked against each.
func ParsePEM(data []byte) (StaticKeys, error) {
	var out StaticKeys
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		var pub crypto.PublicKey
		switch b.Type {
		case "PUBLIC KEY":
			p, err := x509.ParsePKIXPublicKey(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("jwt: PEM: %w", err)
			}
			pub = p
		case "CERTIFICATE":
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("jwt: PEM: %w", err)
			}
			pub = c.PublicKey
		default:
			if strings.Contains(b.Type, "PRIVATE") {
				return nil, fmt.Errorf("jwt: PEM: a %s block: give the public key only", b.Type)
			}
			continue
		}
		switch p := pub.(type) {
		case *rsa.PublicKey:
			if p.N.BitLen() < MinRSABits {
				return nil, fmt.Errorf("jwt: PEM: RSA modulus of %d bits", p.N.BitLen())
			}
		case *ecdsa.PublicKey, ed25519.PublicKey:
		default:
			return nil, fmt.Errorf("jwt: PEM: unsupported key type %T", pub)
		}
		out = append(out, Key{Public: pub})
	}
	if len(out) == 0 {
		return nil, errors.New("jwt: PEM: no public key")
	}
	return out, nil
}

// Algorithm families.
var (
	hmacAlgs       = []string{"HS256", "HS384", "HS512"}
	asymmetricAlgs = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)

func isHMAC(alg string) bool {
	return alg == "HS256" || alg == "HS384" || alg == "HS512"
}

func asymmetric(alg string) bool {
	for _, a := range asymmetricAlgs {
		if a == alg {
			return true
		}
	}
	return false
}

// hmacMinBytes is RFC 7518 §3.2: a key at least as long as the hash.
func hmacMinBytes(alg string) int {
	switch alg {
	case "HS384":
		return 48
	case "HS512":
		return 64
	}
	return 32
}

// fits reports whether alg verifies with pub: RS/PS with RSA, ES with the
// matching curve, EdDSA with Ed25519.
func fits(alg string, pub crypto.PublicKey) bool {
	switch p := pub.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case *ecdsa.PublicKey:
		switch alg {
		case "ES256":
			return p.Curve == elliptic.P256()
		case "ES384":
			return p.Curve == elliptic.P384()
		case "ES512":
			return p.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}

// KeyFits reports whether a token signed with alg can verify with k: the
// key's own Algorithm, when it names one, must be alg, and alg must fit the
// key's type (RS/PS with RSA, ES with the matching curve, EdDSA with
// Ed25519). An HMAC alg fits no key.
func KeyFits(alg string, k Key) bool {
	return (k.Algorithm == "" || k.Algorithm == alg) && fits(alg, k.Public)
}

// AsymmetricAlgorithms lists the public-key algorithms the package verifies.
func AsymmetricAlgorithms() []string { return append([]string(nil), asymmetricAlgs...) }
