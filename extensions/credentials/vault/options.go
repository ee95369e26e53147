package vault

import (
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/breadai/bread/core"
	"github.com/hashicorp/vault/api"
)

// Defaults filled in by New for zero Options fields.
const (
	// DefaultMount is the KV v2 mount read when Options.Mount is empty; it is
	// the mount a Vault dev server enables.
	DefaultMount = "secret"
	// DefaultTimeout bounds one Get, retries included.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxRetries is how often a Get is retried after a connection
	// error, HTTP 412, 429 or 5xx (except 501): the official client's own
	// default.
	DefaultMaxRetries = 2
	// DefaultMinRetryBackoff and DefaultMaxRetryBackoff bound the wait
	// between retries: the official client's own defaults.
	DefaultMinRetryBackoff = 1000 * time.Millisecond
	DefaultMaxRetryBackoff = 1500 * time.Millisecond
)

// Options configure a Vault KV v2 credential provider. The zero value reads
// the mount "secret" from the Vault that VAULT_ADDR and VAULT_TOKEN name.
type Options struct {
	// Address is Vault's base URL, for example https://vault.internal:8200.
	// Empty means what the official client's api.DefaultConfig reads:
	// VAULT_ADDR (or VAULT_AGENT_ADDR, which wins over it), else
	// https://127.0.0.1:8200. A non-empty Address wins over both variables.
	Address string
	// Token is sent as X-Vault-Token. Empty means VAULT_TOKEN, which
	// api.NewClient reads; with neither, requests go without a token (as
	// through a Vault Agent that adds one).
	Token string
	// Mount is the KV v2 mount (default "secret"): letters, digits, '_' or
	// '-', starting with a letter.
	Mount string
	// Namespace, for Vault Enterprise and HCP Vault, is sent as
	// X-Vault-Namespace. Empty means VAULT_NAMESPACE, which api.NewClient
	// reads; with neither, no namespace header is sent.
	Namespace string
	// Timeout bounds one Get, retries and backoff included (default 10s).
	// A negative Timeout sets no bound beyond the caller's context.
	Timeout time.Duration
	// MaxRetries is how often a Get is retried after a connection error or
	// HTTP 412, 429 or 5xx (except 501). 0 means DefaultMaxRetries; -1 means
	// no retries. VAULT_MAX_RETRIES is not consulted.
	MaxRetries int
	// MinRetryBackoff and MaxRetryBackoff bound the jittered linear wait
	// between retries (defaults 1s and 1.5s).
	MinRetryBackoff time.Duration
	MaxRetryBackoff time.Duration

	// Client, when set, is used instead of building one: for callers that
	// already hold a configured, authenticated *api.Client (TLS, auth
	// method, token renewal). It is never modified: a non-empty Token or
	// Namespace applies to a shallow copy (api.Client.WithNamespace) that
	// shares the client's configuration and connection pool. Address,
	// MaxRetries, MinRetryBackoff and MaxRetryBackoff belong to the client's
	// own api.Config and must be left zero. Timeout still bounds each Get.
	Client *api.Client
}

// segment is what a credential name or mount may look like: both become
// path segments of /v1/{mount}/data/{name}, and the official client joins
// paths with path.Join, so nothing path- or URL-meaningful may pass ("/",
// "..", "?", "#", "%", spaces).
var segment = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

// validName reports whether name can be read as a credential: it names both
// the secret at {mount}/data/{name} and the key within it.
func validName(name string) bool { return segment.MatchString(name) }

// normalize validates o and fills the defaults.
func (o Options) normalize() (Options, error) {
	if o.Mount == "" {
		o.Mount = DefaultMount
	}
	if !segment.MatchString(o.Mount) {
		return o, &core.BreadError{
			Code:    core.CodeInvalidVaultMount,
			Message: "vault mount " + quoteTruncated(o.Mount) + " must be letters, digits, '_' or '-', starting with a letter",
			Context: map[string]any{"mount": o.Mount},
		}
	}
	if o.Address != "" {
		if o.Client != nil {
			return o, invalidConfig("vault: Address and Client are exclusive; set the address on the client's api.Config")
		}
		u, err := url.Parse(strings.TrimRight(o.Address, "/"))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return o, invalidConfig("vault address must be an http(s) URL")
		}
	}
	if o.Client != nil && (o.MaxRetries != 0 || o.MinRetryBackoff != 0 || o.MaxRetryBackoff != 0) {
		return o, invalidConfig("vault: retries of a supplied Client are set on its api.Config, not in Options")
	}
	if !printable(o.Token) {
		// The token itself never goes into an error.
		return o, invalidConfig("vault token contains non-printable characters")
	}
	if !printable(o.Namespace) {
		return o, invalidConfig("vault namespace contains non-printable characters")
	}
	switch {
	case o.Timeout == 0:
		o.Timeout = DefaultTimeout
	case o.Timeout < 0:
		o.Timeout = 0
	}
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = DefaultMaxRetries
	case o.MaxRetries == -1:
		o.MaxRetries = 0
	case o.MaxRetries < 0:
		return o, invalidConfig("vault: MaxRetries must be -1 (none), 0 (default) or positive")
	}
	if o.MinRetryBackoff < 0 || o.MaxRetryBackoff < 0 {
		return o, invalidConfig("vault: retry backoffs must not be negative")
	}
	if o.MinRetryBackoff == 0 {
		o.MinRetryBackoff = DefaultMinRetryBackoff
	}
	if o.MaxRetryBackoff == 0 {
		o.MaxRetryBackoff = max(DefaultMaxRetryBackoff, o.MinRetryBackoff)
	}
	if o.MaxRetryBackoff < o.MinRetryBackoff {
		return o, invalidConfig("vault: MaxRetryBackoff is less than MinRetryBackoff")
	}
	return o, nil
}

// client returns the *api.Client o describes: o.Client (copied when Token
// or Namespace must differ), or a new one from api.DefaultConfig with o's
// settings written over what it read from the environment.
func (o Options) client() (*api.Client, error) {
	if o.Client != nil {
		c := o.Client
		if o.Token != "" || o.Namespace != "" {
			ns := o.Namespace
			if ns == "" {
				ns = c.Namespace()
			}
			c = c.WithNamespace(ns) // a shallow copy: the caller's client stays as it was
			if o.Token != "" {
				c.SetToken(o.Token)
			}
		}
		return c, nil
	}
	cfg := api.DefaultConfig()
	if cfg.Error != nil {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "vault client configuration from the environment is malformed", Cause: cfg.Error}
	}
	if o.Address != "" {
		cfg.Address = strings.TrimRight(o.Address, "/")
		cfg.AgentAddress = "" // an explicit address wins over VAULT_AGENT_ADDR too
	}
	cfg.Timeout = o.Timeout
	cfg.MaxRetries = o.MaxRetries
	cfg.MinRetryWait = o.MinRetryBackoff
	cfg.MaxRetryWait = o.MaxRetryBackoff
	c, err := api.NewClient(cfg)
	if err != nil {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "vault client could not be configured", Cause: err}
	}
	if o.Token != "" {
		c.SetToken(o.Token)
	}
	if o.Namespace != "" {
		c.SetNamespace(o.Namespace)
	}
	return c, nil
}

func invalidConfig(msg string) *core.BreadError {
	return &core.BreadError{Code: core.CodeInvalidConfig, Message: msg}
}

func printable(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0
}

// quoteTruncated quotes s, cut to 64 bytes on a rune boundary, for messages.
func quoteTruncated(s string) string {
	const n = 64
	if len(s) <= n {
		return `"` + s + `"`
	}
	cut := n
	for i := 0; i < 3 && cut > 0 && s[cut]&0xC0 == 0x80; i++ {
		cut--
	}
	return `"` + s[:cut] + `…"`
}
