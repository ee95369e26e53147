package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine/internal/netguard"
)

// Options configure a Sender. The zero value sends unsigned deliveries to
// any public http(s) host, 5 attempts, 1 s first backoff, 10 s per attempt.
type Options struct {
	// Secret signs every delivery (SignatureHeader). Without it or
	// SecretCredential deliveries go unsigned; the engine refuses a
	// webhook then.
	Secret string
	// SecretCredential, instead of Secret, names the signing secret in
	// Credentials: Check reads it (unavailable: VALIDATION_ERROR) and every
	// attempt reads it again, so a rotated secret signs the next delivery.
	SecretCredential string
	// AllowHosts limits the hosts a target may name (exact names,
	// "*.example.com" or "*"); empty allows any host.
	AllowHosts []string
	// AllowPrivateNetworks lets targets reach loopback, private and
	// link-local addresses (a receiver on the same host or network).
	AllowPrivateNetworks bool
	// MaxAttempts bounds the attempts of one delivery (default 5).
	MaxAttempts int
	// Backoff is the wait after the first failed attempt, doubled after
	// each (default 1 s, at most 1 min).
	Backoff time.Duration
	// Timeout bounds one attempt (default 10 s).
	Timeout time.Duration
	// Credentials reads SecretCredential; nil is the environment. The
	// engine sets its Config.Credentials here.
	Credentials core.CredentialProvider `json:"-"`
}

// Delivery is one notification: Body is POSTed to URL as JSON, with Header
// added (a protocol's own token, say) and the signature set.
type Delivery struct {
	URL    string
	Body   []byte
	Header http.Header
}

// ErrAbandoned is wrapped by Send when it gives up waiting to retry because
// its context ended or the Sender was closed.
var ErrAbandoned = errors.New("webhook: delivery abandoned before its retry")

// Sender delivers webhooks through one guarded HTTP client, whose
// connections every delivery reuses. It is safe for concurrent use; Send
// blocks its caller, who owns the goroutine.
type Sender struct {
	opts   Options
	policy netguard.Policy
	client *http.Client

	mu     sync.Mutex
	closed bool
	quit   chan struct{} // closed by Close: no more retries
}

// New returns a Sender for o, its defaults applied.
func New(o Options) *Sender {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	if o.Backoff <= 0 {
		o.Backoff = time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Credentials == nil {
		o.Credentials = core.EnvCredentials()
	}
	p := netguard.Policy{AllowHosts: o.AllowHosts, AllowPrivateNetworks: o.AllowPrivateNetworks}
	if len(p.AllowHosts) == 0 {
		p.AllowHosts = []string{"*"}
	}
	return &Sender{opts: o, policy: p, client: netguard.Client(p, o.Timeout), quit: make(chan struct{})}
}

// Signed reports whether the Sender signs its deliveries (it has a Secret
// or a SecretCredential).
func (s *Sender) Signed() bool { return s.opts.Secret != "" || s.opts.SecretCredential != "" }

func refused(msg, target string) error {
	if len(target) > 200 {
		target = target[:200]
	}
	return &core.BreadError{Code: core.CodeValidationError, Message: "webhook: " + msg, Context: map[string]any{"webhook": target}}
}

// Check refuses, before anything is sent, a target the Sender would not
// call: not an http(s) URL with a host (or one with credentials in it), a
// host outside AllowHosts, localhost or a literal non-public address
// (unless AllowPrivateNetworks), or a SecretCredential that cannot be
// read. A name that resolves to a non-public address is refused later, at
// dial time. It returns the URL as it will be called; a refusal is a
// *core.BreadError VALIDATION_ERROR whose Context["webhook"] is the target.
func (s *Sender) Check(ctx context.Context, target string) (string, error) {
	u, err := s.check(target)
	if err != nil {
		return "", err
	}
	if _, err := s.secret(ctx); err != nil {
		return "", refused("the signing secret is unavailable: "+err.Error(), target)
	}
	return u, nil
}

func (s *Sender) check(target string) (string, error) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
		return "", refused("not an http or https URL with a host", target)
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if !s.policy.HostAllowed(host) {
		return "", refused("host "+strconv.Quote(host)+" is not allowed", target)
	}
	if !s.opts.AllowPrivateNetworks {
		if host == "localhost" || strings.HasSuffix(host, ".localhost") {
			return "", refused("loopback addresses are not allowed", target)
		}
		if a, err := netip.ParseAddr(host); err == nil && !netguard.Public(a) {
			return "", refused("loopback, private and link-local addresses are not allowed", target)
		}
	}
	return u.String(), nil
}

// secret is the signing secret: Secret, or SecretCredential read now; ""
// when the Sender does not sign.
func (s *Sender) secret(ctx context.Context) (string, error) {
	if s.opts.SecretCredential == "" {
		return s.opts.Secret, nil
	}
	v, err := s.opts.Credentials.Get(ctx, s.opts.SecretCredential)
	if err == nil && v == "" {
		err = errors.New("credential " + s.opts.SecretCredential + " is empty")
	}
	return v, err
}

// Send POSTs d until an attempt succeeds (a 2xx) or fails for good, and
// returns how many attempts it made. A 5xx, a 429, a failed connection or
// an unreadable SecretCredential is retried, up to MaxAttempts, after
// Backoff doubled each time (at most 1 min); any other answer, and a
// target the guard refuses, ends the delivery at once. The target is
// checked as Check does first (a refusal: 0 attempts). A context that
// ends (during an attempt or the wait before a retry), or a Close during
// that wait, ends Send with an error wrapping ErrAbandoned; Close lets an
// attempt under way run to its end (Timeout bounds it).
func (s *Sender) Send(ctx context.Context, d Delivery) (attempts int, err error) {
	target, err := s.check(d.URL)
	if err != nil {
		return 0, err
	}
	wait := s.opts.Backoff
	for attempt := 1; ; attempt++ {
		retry, err := s.post(ctx, target, d)
		if err == nil {
			return attempt, nil
		}
		if ctx.Err() != nil {
			return attempt, fmt.Errorf("%w: %w (last attempt: %w)", ErrAbandoned, context.Cause(ctx), err)
		}
		if !retry || attempt >= s.opts.MaxAttempts {
			return attempt, err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return attempt, fmt.Errorf("%w: %w (last attempt: %w)", ErrAbandoned, context.Cause(ctx), err)
		case <-s.quit:
			t.Stop()
			return attempt, fmt.Errorf("%w: the sender closed (last attempt: %w)", ErrAbandoned, err)
		}
		wait = min(wait*2, time.Minute)
	}
}

// post makes one attempt; retry says whether another may succeed.
func (s *Sender) post(ctx context.Context, target string, d Delivery) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(d.Body))
	if err != nil {
		return false, err
	}
	for k, vs := range d.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "bread-webhook")
	}
	secret, err := s.secret(ctx)
	if err != nil {
		return true, fmt.Errorf("webhook: reading the signing secret: %w", err)
	}
	if secret != "" {
		req.Header.Set(SignatureHeader, Sign(secret, time.Now(), d.Body))
	}
	res, err := s.client.Do(req)
	if err != nil {
		blocked := errors.Is(err, netguard.ErrBlockedAddress) || errors.Is(err, netguard.ErrHostNotAllowed)
		return !blocked, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return false, nil
	case res.StatusCode >= 500 || res.StatusCode == http.StatusTooManyRequests:
		return true, errors.New("webhook answered " + res.Status)
	}
	return false, errors.New("webhook answered " + res.Status)
}

// Close makes every Send waiting to retry give up (ErrAbandoned) and drops
// the client's idle connections. An attempt under way finishes. Close may
// be called more than once: a caller that waited for its Sends to return
// calls it again to drop the connections they left idle.
func (s *Sender) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.quit)
	}
	s.mu.Unlock()
	s.client.CloseIdleConnections()
}
