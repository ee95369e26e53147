package vault

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/breadai/bread/core"
	"github.com/hashicorp/vault/api"
)

// Reasons a Get fails with CREDENTIAL_UNAVAILABLE, in the error's
// Context["reason"].
const (
	// ReasonSecretNotFound: Vault has no secret at {mount}/data/{name}
	// (HTTP 404, or an empty answer).
	ReasonSecretNotFound = "secret_not_found"
	// ReasonSecretDeleted: the secret's latest version was deleted or
	// destroyed.
	ReasonSecretDeleted = "secret_deleted"
	// ReasonFieldNotFound: the secret exists but has no key named name, or
	// its value is null.
	ReasonFieldNotFound = "field_not_found"
	// ReasonPermissionDenied: Vault refused the token (HTTP 401 or 403).
	ReasonPermissionDenied = "permission_denied"
	// ReasonUnreachable: no HTTP answer (refused, DNS, TLS, reset).
	ReasonUnreachable = "unreachable"
	// ReasonTimeout: Options.Timeout (or the client's own timeout) passed.
	ReasonTimeout = "timeout"
	// ReasonVaultError: any other HTTP error status, after retries (a
	// sealed or standby Vault answers 503); Context["status"] has it.
	ReasonVaultError = "vault_error"
	// ReasonBadResponse: the answer is not KV v2 JSON.
	ReasonBadResponse = "bad_response"
)

// Provider reads credentials from a Vault KV v2 mount. It implements
// core.CredentialProvider and is safe for concurrent use. It caches nothing:
// every Get is one KV v2 read, so a rotated secret takes effect at once.
type Provider struct {
	client  *api.Client
	kv      *api.KVv2
	mount   string
	host    string
	timeout time.Duration
}

var _ core.CredentialProvider = (*Provider)(nil)

// New returns a provider for opts. Construction does not contact Vault. A
// malformed mount is INVALID_VAULT_MOUNT; a malformed address, token,
// namespace or retry setting, or malformed VAULT_* variables the official
// client reads, are INVALID_CONFIG. The token never appears in an error.
func New(opts Options) (*Provider, error) {
	o, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	c, err := o.client()
	if err != nil {
		return nil, err
	}
	if !printable(c.Token()) {
		return nil, invalidConfig("vault token (from VAULT_TOKEN or the client) contains non-printable characters")
	}
	host := ""
	if u, err := url.Parse(c.Address()); err == nil {
		host = u.Host // never the userinfo an address may carry
	}
	return &Provider{client: c, kv: c.KVv2(o.Mount), mount: o.Mount, host: host, timeout: o.Timeout}, nil
}

// Client returns the official client the provider reads through, for token
// renewal (api.LifetimeWatcher) or other Vault calls. With Options.Client
// and no Token or Namespace override, it is that client.
func (p *Provider) Client() *api.Client { return p.client }

// Mount returns the KV v2 mount the provider reads.
func (p *Provider) Mount() string { return p.mount }

// Get reads the secret named name at {mount}/data/{name} and returns the
// value of its key name: a string as it is, any other JSON value (number,
// bool, object, array) in its JSON form.
//
// A name that is not letters, digits, '_' or '-' starting with a letter is
// INVALID_CREDENTIAL_NAME, and nothing is sent. The caller's context ending
// is RUN_CANCELLED, as core.AsBreadError maps context errors. Every other
// failure is CREDENTIAL_UNAVAILABLE with Context {name, mount, reason} (see
// the Reason constants; "status" for HTTP errors) and the official client's
// error as Cause, so errors.Is(err, api.ErrSecretNotFound) and
// errors.As(err, new(*api.ResponseError)) work. Messages carry no token and
// no text from Vault.
func (p *Provider) Get(ctx context.Context, name string) (string, error) {
	if !validName(name) {
		return "", &core.BreadError{
			Code:    core.CodeInvalidCredentialName,
			Message: "credential name " + quoteTruncated(name) + " must be letters, digits, '_' or '-', starting with a letter",
			Context: map[string]any{"name": name},
		}
	}
	if err := ctx.Err(); err != nil {
		return "", p.cancelled(name, context.Cause(ctx))
	}
	rctx := ctx
	if p.timeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	secret, err := p.kv.Get(rctx, name)
	if err != nil {
		return "", p.classify(ctx, name, err)
	}
	if secret.Data == nil {
		if m := secret.VersionMetadata; m != nil && (m.Destroyed || !m.DeletionTime.IsZero()) {
			return "", p.unavailable(name, ReasonSecretDeleted, "the latest version of the secret at "+p.mount+"/"+name+" was deleted", nil)
		}
		return "", p.unavailable(name, ReasonBadResponse, "vault's answer is not KV v2 JSON", nil)
	}
	val, ok := secret.Data[name]
	if !ok || val == nil {
		return "", p.unavailable(name, ReasonFieldNotFound, "the secret has no key "+quoteTruncated(name), nil)
	}
	if s, ok := val.(string); ok {
		return s, nil
	}
	// The client decodes with UseNumber, so numbers keep their digits.
	b, err := json.Marshal(val)
	if err != nil {
		return "", p.unavailable(name, ReasonBadResponse, "the secret's key "+quoteTruncated(name)+" cannot be encoded", err)
	}
	return string(b), nil
}

// classify maps an error from the official client to a BreadError; ctx is
// the caller's context, before the provider's timeout.
func (p *Provider) classify(ctx context.Context, name string, err error) *core.BreadError {
	if ctx.Err() != nil {
		return p.cancelled(name, context.Cause(ctx))
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return p.unavailable(name, ReasonTimeout, "vault did not answer within "+p.timeout.String(), err)
	}
	if errors.Is(err, api.ErrSecretNotFound) {
		return p.unavailable(name, ReasonSecretNotFound, "vault has no secret at "+p.mount+"/"+name, err)
	}
	var re *api.ResponseError
	if errors.As(err, &re) {
		switch re.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			return p.unavailable(name, ReasonPermissionDenied, "vault refused the token (HTTP "+strconv.Itoa(re.StatusCode)+")", err).WithContext("status", re.StatusCode)
		case http.StatusNotFound:
			return p.unavailable(name, ReasonSecretNotFound, "vault has no secret at "+p.mount+"/"+name, err).WithContext("status", re.StatusCode)
		}
		return p.unavailable(name, ReasonVaultError, "vault answered HTTP "+strconv.Itoa(re.StatusCode), err).WithContext("status", re.StatusCode)
	}
	var ue *url.Error
	var ne net.Error
	if errors.As(err, &ue) || errors.As(err, &ne) {
		return p.unavailable(name, ReasonUnreachable, "vault is unreachable at "+p.host, err)
	}
	return p.unavailable(name, ReasonBadResponse, "vault's answer is not KV v2 JSON", err)
}

func (p *Provider) unavailable(name, reason, why string, cause error) *core.BreadError {
	return &core.BreadError{
		Code:    core.CodeCredentialUnavailable,
		Message: "credential " + quoteTruncated(name) + " is unavailable: " + why,
		Context: map[string]any{"name": name, "mount": p.mount, "reason": reason},
		Cause:   cause,
	}
}

func (p *Provider) cancelled(name string, cause error) *core.BreadError {
	return &core.BreadError{
		Code:    core.CodeRunCancelled,
		Message: "reading credential " + quoteTruncated(name) + " from vault was cancelled",
		Context: map[string]any{"name": name, "mount": p.mount},
		Cause:   cause,
	}
}
