package apikey

import (
	"net/http"
	"strings"

	"github.com/breadai/bread/core"
)

// DefaultHeader is the header a key travels in when Options.Header is empty.
const DefaultHeader = "Authorization"

// DefaultSubject is the identity subject of a key from Options.Keys or the
// credential provider.
const DefaultSubject = "api-key"

// Options say where a key travels and which keys are valid.
type Options struct {
	// Header carries the key (default Authorization).
	Header string
	// Scheme, when set, prefixes the key: "Bearer" reads and writes
	// "Authorization: Bearer <key>". Matching is case-insensitive, as RFC
	// 9110 says. Empty reads the whole header value (X-API-Key style).
	Scheme string
	// Keys are accepted keys; each authenticates as Subject.
	Keys []string
	// Identities maps keys to the identity each one authenticates as, for
	// per-caller authorization.
	Identities map[string]core.AuthIdentity
	// Credentials and CredentialName read one more key from a credential
	// provider on every request, so a rotated secret takes effect at once.
	Credentials    core.CredentialProvider
	CredentialName string
	// Subject is the identity of Keys and the credential key (default
	// "api-key").
	Subject string
}

// normalize validates opts and fills the defaults.
func (o Options) normalize() (Options, error) {
	if o.Header == "" {
		o.Header = DefaultHeader
	}
	if !core.ValidHTTPToken(o.Header) {
		return o, &core.BreadError{Code: core.CodeInvalidConfig, Message: "apikey: Header " + o.Header + " is not a valid header name"}
	}
	o.Header = http.CanonicalHeaderKey(o.Header)
	if o.Scheme != "" && !core.ValidHTTPToken(o.Scheme) {
		return o, &core.BreadError{Code: core.CodeInvalidConfig, Message: "apikey: Scheme must be a single token such as Bearer"}
	}
	if (o.Credentials == nil) != (o.CredentialName == "") {
		return o, &core.BreadError{Code: core.CodeInvalidConfig, Message: "apikey: Credentials and CredentialName go together"}
	}
	if o.Subject == "" {
		o.Subject = DefaultSubject
	}
	for _, k := range o.Keys {
		if strings.TrimSpace(k) == "" {
			return o, &core.BreadError{Code: core.CodeInvalidConfig, Message: "apikey: a key in Keys is empty"}
		}
	}
	for k := range o.Identities {
		if strings.TrimSpace(k) == "" {
			return o, &core.BreadError{Code: core.CodeInvalidConfig, Message: "apikey: a key in Identities is empty"}
		}
	}
	return o, nil
}
