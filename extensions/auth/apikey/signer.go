package apikey

import (
	"context"
	"net/http"

	"github.com/breadai/bread/core"
)

// KeySigner is the client-side signer.
type KeySigner struct {
	opts Options
}

var _ core.BreadSigner = (*KeySigner)(nil)

// Signer returns a core.BreadSigner that sets the header to the first of
// opts.Keys, or else to the credential provider's key, on every request.
// Identities have no order, so a signer cannot pick from them.
func Signer(opts Options) (*KeySigner, error) {
	opts, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	if len(opts.Keys) == 0 && opts.Credentials == nil {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "apikey: a signer needs Keys or Credentials"}
	}
	return &KeySigner{opts: opts}, nil
}

// Sign implements core.BreadSigner.
func (s *KeySigner) Sign(ctx context.Context, h http.Header) error {
	key := ""
	if len(s.opts.Keys) > 0 {
		key = s.opts.Keys[0]
	} else {
		v, err := s.opts.Credentials.Get(ctx, s.opts.CredentialName)
		if err != nil {
			return core.AsBreadError(err, core.CodeCredentialUnavailable)
		}
		key = v
	}
	if key == "" {
		return &core.BreadError{Code: core.CodeCredentialUnavailable, Message: "apikey: no key available to sign with"}
	}
	if s.opts.Scheme != "" {
		key = s.opts.Scheme + " " + key
	}
	h.Set(s.opts.Header, key)
	return nil
}
