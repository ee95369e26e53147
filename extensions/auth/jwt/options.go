package jwt

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/breadai/bread/core"
)

// Defaults.
const (
	DefaultHeader    = "Authorization"
	DefaultScheme    = "Bearer"
	DefaultSubject   = "jwt"
	DefaultRealm     = "bread"
	DefaultClockSkew = 30 * time.Second
	// MaxClockSkew bounds ClockSkew: a larger tolerance would keep expired
	// tokens alive.
	MaxClockSkew = 5 * time.Minute
)

// Options say which tokens the strategy accepts.
type Options struct {
	// Header carries the token (default Authorization).
	Header string
	// Scheme prefixes the token (default Bearer when Header is
	// Authorization; with another header, empty reads the whole value).
	Scheme string

	// Secret verifies HS256/384/512 tokens; it must be at least as long as
	// the hash (32 bytes for HS256, RFC 7518 §3.2).
	Secret []byte
	// Keys verify RS*, PS*, ES* and EdDSA tokens: StaticKeys (ParseJWKS,
	// ParsePEM) or a RemoteJWKS.
	Keys KeySource
	// Algorithms is the allow-list of alg values. Default: HS256 with a
	// Secret; RS256/384/512, PS256/384/512, ES256/384/512 and EdDSA with
	// Keys; both lists with both. "none" is never accepted, HS* needs Secret
	// and the others need Keys.
	Algorithms []string

	// Issuer is the required iss. A token naming another issuer is not this
	// strategy's: it passes to the next strategy, so strategies for two
	// issuers compose.
	Issuer string
	// Audience lists accepted aud values; the token must name one.
	Audience []string
	// AllowUnverifiedIssuerAudience accepts tokens on signature and time
	// alone when neither Issuer nor Audience is set; without it such a
	// configuration is refused.
	AllowUnverifiedIssuerAudience bool
	// ClockSkew is the tolerance on exp, nbf and iat (default 30s, at most
	// 5m).
	ClockSkew time.Duration
	// AllowMissingExpiry accepts tokens without exp. By default they are
	// refused: a token without exp is valid forever.
	AllowMissingExpiry bool

	// SubjectClaim names the claim that becomes the identity's subject
	// (default "sub"); a token without it authenticates as "jwt".
	SubjectClaim string
	// Claims are the claims copied into the identity's Claims; empty copies
	// every claim. The token's scopes are added as "scopes" either way.
	Claims []string

	// MaxTokenBytes refuses longer tokens before decoding them (default
	// 8 KiB).
	MaxTokenBytes int
	// Realm is the realm of the WWW-Authenticate challenge (default bread).
	Realm string
	// Name is the strategy's name (default "jwt").
	Name string
	// Now is the clock (default time.Now), for tests.
	Now func() time.Time
}

func invalid(format string, args ...any) error {
	return core.Errorf(core.CodeInvalidConfig, "jwt: "+format, args...)
}

// normalize validates opts and fills the defaults.
func (o Options) normalize() (Options, error) {
	if o.Header == "" {
		o.Header = DefaultHeader
	}
	if !core.ValidHTTPToken(o.Header) {
		return o, invalid("Header %q is not a valid header name", o.Header)
	}
	o.Header = http.CanonicalHeaderKey(o.Header)
	if o.Scheme == "" && o.Header == DefaultHeader {
		o.Scheme = DefaultScheme
	}
	if o.Scheme != "" && !core.ValidHTTPToken(o.Scheme) {
		return o, invalid("Scheme must be a single token such as Bearer")
	}
	if len(o.Secret) == 0 && o.Keys == nil {
		return o, invalid("set Secret (HS256) or Keys (a JWKS or public keys) to verify tokens")
	}
	if o.Issuer == "" && len(o.Audience) == 0 && !o.AllowUnverifiedIssuerAudience {
		return o, invalid("set Issuer and/or Audience, or AllowUnverifiedIssuerAudience to accept tokens on signature and time alone")
	}
	for _, a := range o.Audience {
		if strings.TrimSpace(a) == "" {
			return o, invalid("an Audience is empty")
		}
	}
	if len(o.Algorithms) == 0 {
		if len(o.Secret) > 0 {
			o.Algorithms = append(o.Algorithms, "HS256")
		}
		if o.Keys != nil {
			o.Algorithms = append(o.Algorithms, asymmetricAlgs...)
		}
	}
	o.Algorithms = slices.Clone(o.Algorithms)
	for _, alg := range o.Algorithms {
		switch {
		case isHMAC(alg):
			if len(o.Secret) == 0 {
				return o, invalid("algorithm %s needs Secret", alg)
			}
			if len(o.Secret) < hmacMinBytes(alg) {
				return o, invalid("Secret is %d bytes; %s needs at least %d", len(o.Secret), alg, hmacMinBytes(alg))
			}
		case asymmetric(alg):
			if o.Keys == nil {
				return o, invalid("algorithm %s needs Keys", alg)
			}
		default:
			return o, invalid("algorithm %q is not accepted (known: %s, %s)", alg, strings.Join(hmacAlgs, ", "), strings.Join(asymmetricAlgs, ", "))
		}
	}
	if o.ClockSkew < 0 || o.ClockSkew > MaxClockSkew {
		return o, invalid("ClockSkew %v is outside 0..%v", o.ClockSkew, MaxClockSkew)
	}
	if o.ClockSkew == 0 {
		o.ClockSkew = DefaultClockSkew
	}
	if o.SubjectClaim == "" {
		o.SubjectClaim = "sub"
	}
	if o.MaxTokenBytes < 0 {
		return o, invalid("MaxTokenBytes cannot be negative")
	}
	if o.MaxTokenBytes == 0 {
		o.MaxTokenBytes = DefaultMaxTokenBytes
	}
	if o.Realm == "" {
		o.Realm = DefaultRealm
	}
	if o.Name == "" {
		o.Name = "jwt"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}
