package core

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// VaultOptions configure a HashiCorp Vault KV v2 credential provider.
type VaultOptions struct {
	// Address is Vault's base URL, for example https://vault.internal:8200.
	Address string
	// Token is sent as X-Vault-Token.
	Token string
	// Mount is the KV v2 mount (default "secret").
	Mount string
	// Namespace, for Vault Enterprise, is sent as X-Vault-Namespace.
	Namespace string
	// HTTPClient defaults to a client with a 10s timeout.
	HTTPClient *http.Client
}

// vaultSegment is what a credential name or mount may look like: both become
// path segments of /v1/{mount}/data/{name}, so nothing URL-meaningful may
// pass ("/", "..", "?", "#", "%", spaces).
var vaultSegment = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

// VaultCredentials reads secrets from Vault's KV v2 engine: the secret named
// name at {mount}/data/{name}, and within it the key name. A malformed mount
// is INVALID_VAULT_MOUNT here; a malformed name is INVALID_CREDENTIAL_NAME on
// Get. The token never appears in an error.
func VaultCredentials(opts VaultOptions) (CredentialProvider, error) {
	if opts.Mount == "" {
		opts.Mount = "secret"
	}
	if !vaultSegment.MatchString(opts.Mount) {
		return nil, &BreadError{
			Code:    CodeInvalidVaultMount,
			Message: "vault mount " + quoteTruncated(opts.Mount) + " must be letters, digits, '_' or '-', starting with a letter",
			Context: map[string]any{"mount": opts.Mount},
		}
	}
	base, err := url.Parse(strings.TrimRight(opts.Address, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, &BreadError{Code: CodeInvalidConfig, Message: "vault address must be an http(s) URL"}
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	return &vaultCredentials{opts: opts, base: base}, nil
}

type vaultCredentials struct {
	opts VaultOptions
	base *url.URL
}

func (v *vaultCredentials) Get(ctx context.Context, name string) (string, error) {
	if !vaultSegment.MatchString(name) {
		return "", &BreadError{
			Code:    CodeInvalidCredentialName,
			Message: "credential name " + quoteTruncated(name) + " must be letters, digits, '_' or '-', starting with a letter",
			Context: map[string]any{"name": name},
		}
	}
	u := *v.base
	u.Path += "/v1/" + v.opts.Mount + "/data/" + name
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("X-Vault-Token", v.opts.Token)
	if v.opts.Namespace != "" {
		req.Header.Set("X-Vault-Namespace", v.opts.Namespace)
	}
	resp, err := v.opts.HTTPClient.Do(req)
	if err != nil {
		return "", &BreadError{Code: CodeCredentialUnavailable, Message: "vault is unreachable at " + v.base.Host, Cause: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", &BreadError{Code: CodeCredentialUnavailable, Message: "reading vault's answer failed", Cause: err}
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return "", credentialUnavailable(name, "vault has no secret at "+v.opts.Mount+"/"+name)
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized:
		return "", credentialUnavailable(name, fmt.Sprintf("vault refused the token (HTTP %d)", resp.StatusCode))
	case resp.StatusCode != http.StatusOK:
		return "", credentialUnavailable(name, fmt.Sprintf("vault answered HTTP %d", resp.StatusCode))
	}
	var kv struct {
		Data struct {
			Data map[string]any `json:"data"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &kv); err != nil {
		return "", credentialUnavailable(name, "vault's answer is not KV v2 JSON")
	}
	val, ok := kv.Data.Data[name]
	if !ok {
		return "", credentialUnavailable(name, "the secret has no key "+quoteTruncated(name))
	}
	if s, ok := val.(string); ok {
		return s, nil
	}
	b, _ := json.Marshal(val)
	return string(b), nil
}
