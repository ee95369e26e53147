package engine

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine/internal/netguard"
)

// WebhookOptions configure the webhooks of background runs: when a run
// started with core.BackgroundOptions.Webhook completes, fails, is
// cancelled or suspends for a human, its record (core.RunRecord JSON) is
// POSTed to the URL, signed with the header
//
//	Bread-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with Secret>
//
// and retried with exponential backoff on a 5xx, a 429 or a failed
// connection. Outbound addresses are checked like the document loader's:
// after DNS, at dial time, loopback, private and link-local addresses are
// refused unless AllowPrivateNetworks.
type WebhookOptions struct {
	// Secret signs every delivery. Without it or SecretCredential, a run
	// that asks for a webhook is refused (VALIDATION_ERROR).
	Secret string
	// SecretCredential, instead of Secret, names the signing secret in the
	// Instance's credential provider (Config.Credentials, else the
	// environment): it is read when a run asks for a webhook (unavailable:
	// VALIDATION_ERROR) and again at every delivery, so a rotated secret
	// signs the next delivery.
	SecretCredential string
	// AllowHosts limits the hosts a webhook may name (exact names,
	// "*.example.com" or "*"); empty allows any host.
	AllowHosts []string
	// AllowPrivateNetworks lets webhooks reach loopback, private and
	// link-local addresses (a receiver on the same host or network).
	AllowPrivateNetworks bool
	// MaxAttempts bounds the deliveries of one record (default 5).
	MaxAttempts int
	// Backoff is the wait after the first failed attempt, doubled after
	// each (default 1 s, at most 1 min).
	Backoff time.Duration
	// Timeout bounds one attempt (default 10 s).
	Timeout time.Duration
}

// SignatureHeader is the header that carries a webhook's signature.
const SignatureHeader = "Bread-Signature"

// SignWebhook returns the Bread-Signature value of body sent at t.
func SignWebhook(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// webhook is one run's validated target.
type webhook struct {
	url    string
	opts   WebhookOptions
	client *http.Client
	creds  core.CredentialProvider
}

func webhookRefused(msg, target string) error {
	return &core.BreadError{Code: core.CodeValidationError, Message: "webhook: " + msg, Context: map[string]any{"webhook": truncateURL(target)}}
}

func truncateURL(s string) string {
	if len(s) > 200 {
		return s[:200]
	}
	return s
}

// newWebhook checks target against the instance's webhook options: an
// http(s) URL with a host the policy allows; a literal non-public address
// or localhost is refused here, a name resolving to one at dial time.
func (in *Instance) newWebhook(target string) (*webhook, error) {
	o := in.cfg.Webhooks
	if o.Secret == "" && o.SecretCredential == "" {
		return nil, webhookRefused("this server has no webhook secret configured", target)
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
		return nil, webhookRefused("not an http or https URL with a host", target)
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	policy := netguard.Policy{AllowHosts: o.AllowHosts, AllowPrivateNetworks: o.AllowPrivateNetworks}
	if len(policy.AllowHosts) == 0 {
		policy.AllowHosts = []string{"*"}
	}
	if !policy.HostAllowed(host) {
		return nil, webhookRefused("host "+strconv.Quote(host)+" is not allowed", target)
	}
	if !o.AllowPrivateNetworks {
		if host == "localhost" || strings.HasSuffix(host, ".localhost") {
			return nil, webhookRefused("loopback addresses are not allowed", target)
		}
		if a, err := netip.ParseAddr(host); err == nil && !netguard.Public(a) {
			return nil, webhookRefused("loopback, private and link-local addresses are not allowed", target)
		}
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	if o.Backoff <= 0 {
		o.Backoff = time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	w := &webhook{url: u.String(), opts: o, client: in.bg.webhookClient(policy, o.Timeout), creds: in.cfg.Credentials}
	if w.creds == nil {
		w.creds = core.EnvCredentials()
	}
	if _, err := w.secret(context.Background()); err != nil {
		return nil, webhookRefused("the signing secret is unavailable: "+err.Error(), target)
	}
	return w, nil
}

// secret is the signing secret: Secret, or SecretCredential read now.
func (w *webhook) secret(ctx context.Context) (string, error) {
	if w.opts.SecretCredential == "" {
		return w.opts.Secret, nil
	}
	s, err := w.creds.Get(ctx, w.opts.SecretCredential)
	if err == nil && s == "" {
		err = errors.New("credential " + w.opts.SecretCredential + " is empty")
	}
	return s, err
}

// send delivers the record of run d, whose stream ended with last. It runs
// on the background goroutine that drained the run. Once Stop begins it
// makes no more retries (an attempt under way finishes, within Stop's
// deadline), so a receiver that is down does not hold a shutdown up.
func (w *webhook) send(in *Instance, d core.Detached, last core.Crumb) {
	ctx := in.bg.ctx
	rec := in.endRecord(ctx, d, last)
	body, err := json.Marshal(rec)
	if err != nil {
		in.log.Error("bread: encoding a webhook's run record failed", append(runAttrs(d.RunID, rec.AgentID, d.SessionID), "error", err)...)
		return
	}
	wait := w.opts.Backoff
	for attempt := 1; ; attempt++ {
		retry, err := w.post(ctx, body)
		if err == nil {
			in.log.Debug("bread: webhook delivered", append(runAttrs(d.RunID, rec.AgentID, d.SessionID), "attempt", attempt)...)
			return
		}
		if !retry || attempt >= w.opts.MaxAttempts || ctx.Err() != nil {
			in.log.Warn("bread: webhook delivery failed", append(runAttrs(d.RunID, rec.AgentID, d.SessionID), "attempts", attempt, "error", err)...)
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			in.log.Warn("bread: webhook delivery abandoned: the instance stopped", append(runAttrs(d.RunID, rec.AgentID, d.SessionID), "attempts", attempt)...)
			return
		case <-in.bg.quit:
			t.Stop()
			in.log.Warn("bread: webhook retry abandoned: the instance is stopping", append(runAttrs(d.RunID, rec.AgentID, d.SessionID), "attempts", attempt)...)
			return
		}
		wait = min(wait*2, time.Minute)
	}
}

// post makes one attempt; retry says whether another may succeed.
func (w *webhook) post(ctx context.Context, body []byte) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "bread-webhook")
	secret, err := w.secret(ctx)
	if err != nil {
		return true, fmt.Errorf("webhook: reading the signing secret: %w", err)
	}
	req.Header.Set(SignatureHeader, SignWebhook(secret, time.Now(), body))
	res, err := w.client.Do(req)
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

// endRecord is the run's record as its store holds it, or, without a run
// store, one made from the crumb its stream ended with.
func (in *Instance) endRecord(ctx context.Context, d core.Detached, last core.Crumb) core.RunRecord {
	if in.records.keeps {
		if rec, err := in.store.GetRun(ctx, d.RunID); err == nil {
			return rec
		}
	}
	rec := core.RunRecord{ID: d.RunID, SessionID: d.SessionID, UpdatedAt: core.NowMillis()}
	if last != nil {
		rec.AgentID = last.Base().AgentID
	}
	switch c := last.(type) {
	case *core.AgentRunEnd:
		rec.Status = core.RunCompleted
	case *core.HumanRequired:
		rec.Status, rec.CheckpointID = core.RunSuspended, c.CheckpointID
	case *core.AgentError:
		rec.Status = core.RunFailed
		if c.Error != nil {
			rec.ErrorCode = c.Error.Code
			if c.Error.Code == core.CodeRunCancelled {
				rec.Status = core.RunCancelled
			}
		}
	}
	return rec
}

// webhookClient is the one guarded client every webhook of the Instance
// shares (its connections are reused), built on first use.
func (b *background) webhookClient(p netguard.Policy, timeout time.Duration) *http.Client {
	b.clientOnce.Do(func() {
		c := netguard.Client(p, timeout)
		b.mu.Lock()
		b.client = c
		b.mu.Unlock()
	})
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.client
}
