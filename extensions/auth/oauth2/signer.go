package oauth2

import (
	"context"
	"net/http"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/breadai/bread/core"
)

// ClientCredentials configure the client-credentials grant (RFC 6749
// §4.4) of a Signer.
type ClientCredentials struct {
	// TokenURL is the authorization server's token endpoint.
	TokenURL string
	// ClientID and ClientSecret identify bread to it.
	ClientID, ClientSecret string
	// Scopes are requested with every token.
	Scopes []string
	// Audience, when set, is sent as the audience parameter (the API the
	// token is for, as Auth0 and others expect).
	Audience string
	// EndpointParams are more form parameters for the token request.
	EndpointParams map[string][]string
	// Header receives the token (default Authorization, as
	// "Bearer <token>").
	Header string
	// HTTPClient makes token requests (default: a fresh client).
	HTTPClient *http.Client
	// Timeout bounds one token request (default 5s).
	Timeout time.Duration
}

// TokenSigner is the client-side signer.
type TokenSigner struct {
	header string
	ts     oauth2.TokenSource
}

var _ core.BreadSigner = (*TokenSigner)(nil)

// Signer returns a core.BreadSigner that attaches an access token from the
// client-credentials grant to every request. The token is fetched on the
// first Sign and reused until shortly before it expires; concurrent Signs
// share one fetch.
func Signer(c ClientCredentials) (*TokenSigner, error) {
	if !httpURL(c.TokenURL) {
		return nil, invalid("TokenURL %q is not an http(s) URL", c.TokenURL)
	}
	if c.ClientID == "" {
		return nil, invalid("ClientID is required")
	}
	if c.Timeout < 0 {
		return nil, invalid("Timeout cannot be negative")
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Header == "" {
		c.Header = "Authorization"
	}
	client := c.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	cp := *client
	cp.Timeout = c.Timeout
	params := map[string][]string{}
	for k, v := range c.EndpointParams {
		params[k] = v
	}
	if c.Audience != "" {
		params["audience"] = []string{c.Audience}
	}
	cfg := &clientcredentials.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, TokenURL: c.TokenURL, Scopes: c.Scopes, EndpointParams: params}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, capClient(&cp, maxResponseBytes))
	return &TokenSigner{header: http.CanonicalHeaderKey(c.Header), ts: cfg.TokenSource(ctx)}, nil
}

// Sign implements core.BreadSigner. A failed token request is
// CREDENTIAL_UNAVAILABLE.
func (s *TokenSigner) Sign(ctx context.Context, h http.Header) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tok, err := s.ts.Token()
	if err != nil {
		return core.Errorf(core.CodeCredentialUnavailable, "oauth2: client-credentials token: %v", err)
	}
	h.Set(s.header, tok.Type()+" "+tok.AccessToken)
	return nil
}
