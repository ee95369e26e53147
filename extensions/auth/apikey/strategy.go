package apikey

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/breadai/bread/core"
)

// Authenticator is the server-side strategy.
type Authenticator struct {
	opts  Options
	keys  []candidate
	idsOf []core.AuthIdentity // identity of keys[i]
}

type candidate [sha256.Size]byte

var _ core.BreadAuthStrategy = (*Authenticator)(nil)

// Strategy returns a core.BreadAuthStrategy accepting the keys of opts. It
// fails when opts name no key at all, or are malformed.
func Strategy(opts Options) (*Authenticator, error) {
	opts, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	if len(opts.Keys) == 0 && len(opts.Identities) == 0 && opts.Credentials == nil {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "apikey: no keys: set Keys, Identities or Credentials"}
	}
	a := &Authenticator{opts: opts}
	for _, k := range opts.Keys {
		a.add(k, core.AuthIdentity{Subject: opts.Subject})
	}
	for k, id := range opts.Identities {
		a.add(k, id)
	}
	return a, nil
}

func (a *Authenticator) add(key string, id core.AuthIdentity) {
	a.keys = append(a.keys, sha256.Sum256([]byte(key)))
	a.idsOf = append(a.idsOf, id)
}

// Name implements core.BreadAuthStrategy.
func (a *Authenticator) Name() string { return "api_key" }

// Authenticate returns the identity of the presented key, nil when the
// request carries no key or a wrong one, and an error only when the
// credential provider could not be read.
func (a *Authenticator) Authenticate(r *http.Request) (*core.AuthIdentity, error) {
	presented, ok := extract(r.Header.Get(a.opts.Header), a.opts.Scheme)
	if !ok {
		return nil, nil
	}
	sum := sha256.Sum256([]byte(presented))
	// Every candidate is compared, whatever matched before: the time taken
	// depends only on how many keys there are.
	match := 0
	for i := range a.keys {
		eq := subtle.ConstantTimeCompare(sum[:], a.keys[i][:])
		match = subtle.ConstantTimeSelect(eq, i+1, match)
	}
	if a.opts.Credentials != nil {
		key, err := a.opts.Credentials.Get(r.Context(), a.opts.CredentialName)
		if err != nil {
			return nil, core.AsBreadError(err, core.CodeCredentialUnavailable)
		}
		if key != "" {
			ks := sha256.Sum256([]byte(key))
			eq := subtle.ConstantTimeCompare(sum[:], ks[:])
			match = subtle.ConstantTimeSelect(eq, len(a.keys)+1, match)
		}
	}
	switch {
	case match == 0:
		return nil, nil
	case match > len(a.keys):
		return &core.AuthIdentity{Subject: a.opts.Subject}, nil
	}
	id := a.idsOf[match-1]
	return &id, nil
}

// extract reads the key out of a header value: after "<scheme> " when a
// scheme is set, the whole value otherwise.
func extract(raw, scheme string) (string, bool) {
	raw = strings.TrimSpace(raw)
	if scheme != "" {
		s, rest, ok := strings.Cut(raw, " ")
		if !ok || !strings.EqualFold(s, scheme) {
			return "", false
		}
		raw = strings.TrimSpace(rest)
	}
	return raw, raw != ""
}
