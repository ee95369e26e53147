package jwt

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/breadai/bread/core"
)

// RFC 6750 error codes, carried by a rejection and echoed in its challenge.
const (
	ErrorInvalidRequest = "invalid_request"
	ErrorInvalidToken   = "invalid_token"
)

// DefaultMaxTokenBytes bounds a bearer token; a longer one is refused before
// any decoding.
const DefaultMaxTokenBytes = 8 << 10

// Reject returns the error a strategy gives for a credential it recognises
// and refuses: a *core.BreadError with code UNAUTHORIZED (the server answers
// 401 and tries no further strategy) whose context names the RFC 6750 error
// code. description goes to the client in the challenge, so it never quotes
// the token.
func Reject(code, description string) error {
	return &core.BreadError{Code: core.CodeUnauthorized, Message: description, Context: map[string]any{"error": code}}
}

// IsRejection reports whether err is a rejection (code UNAUTHORIZED) rather
// than a failure to check.
func IsRejection(err error) bool {
	return errors.Is(err, &core.BreadError{Code: core.CodeUnauthorized})
}

// BearerChallenge is the WWW-Authenticate value of a bearer strategy (RFC
// 6750 §3): the bare realm when the request carried no token of its kind,
// with error and error_description when rejection refused one.
func BearerChallenge(realm string, rejection error) string {
	var b strings.Builder
	b.WriteString(`Bearer realm=`)
	b.WriteString(quote(realm))
	var be *core.BreadError
	if rejection != nil && errors.As(rejection, &be) && be.Code == core.CodeUnauthorized {
		code, _ := be.Context["error"].(string)
		if code == "" {
			code = ErrorInvalidToken
		}
		b.WriteString(`, error=`)
		b.WriteString(quote(code))
		if be.Message != "" {
			b.WriteString(`, error_description=`)
			b.WriteString(quote(be.Message))
		}
	}
	return b.String()
}

// quote is an RFC 9110 quoted-string; characters a header cannot carry are
// dropped.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\t' || (c >= 0x20 && c < 0x7f):
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// BearerToken reads the credential of r from header: after "<scheme> " when
// scheme is set (matched case-insensitively), the whole value otherwise. ok
// is false when the request carries no such credential. Two values with
// the scheme are a malformed request, and a token longer than maxBytes is
// refused before anything decodes it; both are rejections.
func BearerToken(r *http.Request, header, scheme string, maxBytes int) (token string, ok bool, err error) {
	var found []string
	for _, v := range r.Header.Values(header) {
		v = strings.TrimSpace(v)
		if scheme != "" {
			s, rest, cut := strings.Cut(v, " ")
			if !cut || !strings.EqualFold(s, scheme) {
				continue
			}
			v = strings.TrimSpace(rest)
		}
		found = append(found, v)
	}
	switch {
	case len(found) == 0:
		return "", false, nil
	case len(found) > 1:
		return "", false, Reject(ErrorInvalidRequest, "more than one bearer credential")
	case found[0] == "":
		return "", false, nil
	case maxBytes > 0 && len(found[0]) > maxBytes:
		return "", false, Reject(ErrorInvalidToken, "the token is too large")
	}
	return found[0], true, nil
}

// Peek is what a token says about itself before its signature is checked:
// enough to tell whether it is a JWT and whose. Nothing in it is trusted.
type Peek struct {
	Alg string
	Kid string
	// Issuer is the unverified iss claim.
	Issuer string
}

// PeekJWT reads the header and the issuer of a compact JWS without
// verifying it. ok is false when token is not shaped as a JWT (three
// base64url segments, a JSON header naming an alg): such a token belongs
// to another strategy. A token shaped as a JWT whose payload does not
// decode is a rejection.
func PeekJWT(token string) (p Peek, ok bool, err error) {
	h, rest, found := strings.Cut(token, ".")
	if !found {
		return p, false, nil
	}
	payload, sig, found := strings.Cut(rest, ".")
	if !found || strings.Contains(sig, ".") || h == "" || !b64url(h) || !b64url(payload) || !b64url(sig) {
		return p, false, nil
	}
	var head struct {
		Alg *string `json:"alg"`
		Kid string  `json:"kid"`
	}
	raw, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil || json.Unmarshal(raw, &head) != nil || head.Alg == nil {
		return p, false, nil
	}
	p.Alg, p.Kid = *head.Alg, head.Kid
	raw, err = base64.RawURLEncoding.DecodeString(payload)
	var claims struct {
		Iss any `json:"iss"`
	}
	if err != nil || json.Unmarshal(raw, &claims) != nil {
		return p, true, Reject(ErrorInvalidToken, "the token is malformed")
	}
	p.Issuer, _ = claims.Iss.(string)
	return p, true, nil
}

// b64url reports whether s uses only the unpadded base64url alphabet.
func b64url(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
