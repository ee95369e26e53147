package jwt

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"

	gojwt "github.com/golang-jwt/jwt/v5"

	"github.com/breadai/bread/core"
)

// Authenticator is the server-side strategy.
type Authenticator struct {
	opts   Options
	parser *gojwt.Parser
}

var _ core.BreadAuthStrategy = (*Authenticator)(nil)

// Strategy returns a core.BreadAuthStrategy verifying bearer JWTs. It fails
// with INVALID_CONFIG when opts name no key, no issuer or audience (without
// AllowUnverifiedIssuerAudience), or are malformed. It does no I/O: a
// RemoteJWKS is fetched when the first token arrives.
func Strategy(opts Options) (*Authenticator, error) {
	opts, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	po := []gojwt.ParserOption{
		gojwt.WithValidMethods(opts.Algorithms),
		gojwt.WithLeeway(opts.ClockSkew),
		gojwt.WithTimeFunc(opts.Now),
		gojwt.WithIssuedAt(),
		gojwt.WithStrictDecoding(),
	}
	if opts.Issuer != "" {
		po = append(po, gojwt.WithIssuer(opts.Issuer))
	}
	if len(opts.Audience) > 0 {
		po = append(po, gojwt.WithAudience(opts.Audience...))
	}
	if !opts.AllowMissingExpiry {
		po = append(po, gojwt.WithExpirationRequired())
	}
	return &Authenticator{opts: opts, parser: gojwt.NewParser(po...)}, nil
}

// Name implements core.BreadAuthStrategy.
func (a *Authenticator) Name() string { return a.opts.Name }

// Challenge is the WWW-Authenticate value for a 401: see BearerChallenge.
func (a *Authenticator) Challenge(rejection error) string {
	return BearerChallenge(a.opts.Realm, rejection)
}

var (
	errUnknownKey = errors.New("no key for the token")
	errCritical   = errors.New("critical header")
)

// Authenticate returns the identity of a valid token; nil, nil when the
// request carries no bearer JWT or one naming another issuer; a rejection
// (see Reject) for a JWT it refuses; and another error only when the keys
// could not be obtained.
func (a *Authenticator) Authenticate(r *http.Request) (*core.AuthIdentity, error) {
	raw, ok, err := BearerToken(r, a.opts.Header, a.opts.Scheme, a.opts.MaxTokenBytes)
	if err != nil || !ok {
		return nil, err
	}
	peek, isJWT, err := PeekJWT(raw)
	if !isJWT {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if a.opts.Issuer != "" && peek.Issuer != a.opts.Issuer {
		return nil, nil
	}
	if !slices.Contains(a.opts.Algorithms, peek.Alg) {
		return nil, Reject(ErrorInvalidToken, "the token's algorithm is not accepted")
	}
	claims := gojwt.MapClaims{}
	_, err = a.parser.ParseWithClaims(raw, claims, func(t *gojwt.Token) (any, error) {
		if _, crit := t.Header["crit"]; crit {
			return nil, errCritical
		}
		alg := t.Method.Alg()
		if isHMAC(alg) {
			return a.opts.Secret, nil
		}
		kid, _ := t.Header["kid"].(string)
		keys, err := a.opts.Keys.Keys(r.Context(), kid)
		if err != nil {
			return nil, err
		}
		var set gojwt.VerificationKeySet
		for _, k := range keys {
			if KeyFits(alg, k) {
				set.Keys = append(set.Keys, k.Public)
			}
		}
		if len(set.Keys) == 0 {
			return nil, errUnknownKey
		}
		return set, nil
	})
	if err != nil {
		return nil, rejection(err)
	}
	return Identity(claims, a.opts.SubjectClaim, a.opts.Claims), nil
}

// rejection maps a parse failure to a rejection, keeping key-source
// failures as errors.
func rejection(err error) error {
	var desc string
	switch {
	case errors.Is(err, ErrKeysUnavailable):
		return err
	case errors.Is(err, errUnknownKey):
		desc = "the token's signing key is unknown"
	case errors.Is(err, errCritical):
		desc = "the token has a critical header this server does not understand"
	case errors.Is(err, gojwt.ErrTokenExpired):
		desc = "the token has expired"
	case errors.Is(err, gojwt.ErrTokenNotValidYet):
		desc = "the token is not valid yet"
	case errors.Is(err, gojwt.ErrTokenUsedBeforeIssued):
		desc = "the token was issued in the future"
	case errors.Is(err, gojwt.ErrTokenInvalidAudience):
		desc = "the token is not for this audience"
	case errors.Is(err, gojwt.ErrTokenInvalidIssuer):
		desc = "the token is from another issuer"
	case errors.Is(err, gojwt.ErrTokenRequiredClaimMissing):
		desc = "the token lacks a required claim"
	case errors.Is(err, gojwt.ErrTokenSignatureInvalid):
		desc = "the token's signature is invalid"
	case errors.Is(err, gojwt.ErrTokenMalformed):
		desc = "the token is malformed"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err // the request went away while keys were fetched
	default:
		desc = "the token is invalid"
	}
	return Reject(ErrorInvalidToken, desc)
}

// Identity builds the identity of verified claims: the subject from
// subjectClaim ("jwt" when absent), the claims named in keep (every claim
// when keep is empty) and the token's scopes as "scopes".
func Identity(claims map[string]any, subjectClaim string, keep []string) *core.AuthIdentity {
	id := &core.AuthIdentity{Subject: DefaultSubject}
	if s, ok := claims[subjectClaim].(string); ok && s != "" {
		id.Subject = s
	}
	if len(keep) == 0 {
		id.Claims = maps.Clone(claims)
	} else {
		id.Claims = make(map[string]any, len(keep)+1)
		for _, k := range keep {
			if v, ok := claims[k]; ok {
				id.Claims[k] = v
			}
		}
	}
	if id.Claims == nil {
		id.Claims = map[string]any{}
	}
	if scopes := Scopes(claims); len(scopes) > 0 {
		id.Claims["scopes"] = scopes
	}
	return id
}

// Scopes reads a token's scopes: the space-separated "scope" string of RFC
// 8693 and RFC 9068, or "scp" as a string or a list of strings.
func Scopes(claims map[string]any) []string {
	var out []string
	add := func(v any) {
		switch s := v.(type) {
		case string:
			out = append(out, strings.Fields(s)...)
		case []any:
			for _, e := range s {
				if str, ok := e.(string); ok && str != "" {
					out = append(out, str)
				}
			}
		case []string:
			out = append(out, s...)
		}
	}
	add(claims["scope"])
	add(claims["scp"])
	slices.Sort(out)
	return slices.Compact(out)
}
