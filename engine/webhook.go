package engine

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine/webhook"
)

// WebhookOptions configure the webhooks of background runs (see
// package webhook, which delivers them): when a run started with
// core.BackgroundOptions.Webhook completes, fails, is cancelled or
// suspends for a human, its record (core.RunRecord JSON) is POSTed to the
// URL, signed with the header
//
//	Bread-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with Secret>
//
// and retried with exponential backoff on a 5xx, a 429 or a failed
// connection. Outbound addresses are checked like the document loader's:
// after DNS, at dial time, loopback, private and link-local addresses are
// refused unless AllowPrivateNetworks. Without Secret or SecretCredential
// the Instance refuses every webhook. Credentials, when nil, is
// Config.Credentials.
type WebhookOptions = webhook.Options

// SignatureHeader is the header that carries a webhook's signature
// (webhook.SignatureHeader).
const SignatureHeader = webhook.SignatureHeader

// SignWebhook returns the Bread-Signature value of body sent at t
// (webhook.Sign).
func SignWebhook(secret string, t time.Time, body []byte) string {
	return webhook.Sign(secret, t, body)
}

// newWebhooks is the Instance's one Sender: its webhook options, read with
// the Instance's credential provider.
func newWebhooks(cfg Config) *webhook.Sender {
	o := cfg.Webhooks
	if o.Credentials == nil {
		o.Credentials = cfg.Credentials
	}
	return webhook.New(o)
}

// checkWebhook refuses, before a run, a webhook this Instance would not
// call: none without a signing secret, else as webhook.Sender.Check.
func (in *Instance) checkWebhook(ctx context.Context, target string) error {
	if !in.bg.webhooks.Signed() {
		return &core.BreadError{Code: core.CodeValidationError, Message: "webhook: this server has no webhook secret configured", Context: map[string]any{"webhook": truncateURL(target)}}
	}
	_, err := in.bg.webhooks.Check(ctx, target)
	return err
}

func truncateURL(s string) string {
	if len(s) > 200 {
		return s[:200]
	}
	return s
}

// deliver posts the record of run d, whose stream ended with last, to
// target. It runs on a background goroutine of the Instance; once Stop
// begins it makes no more retries (an attempt under way finishes, within
// Stop's deadline), so a receiver that is down does not hold a shutdown up.
func (in *Instance) deliver(target string, d core.Detached, last core.Crumb) {
	ctx := in.bg.ctx
	rec := in.endRecord(ctx, d, last)
	attrs := runAttrs(d.RunID, rec.AgentID, d.SessionID)
	body, err := json.Marshal(rec)
	if err != nil {
		in.log.Error("bread: encoding a webhook's run record failed", append(attrs, "error", err)...)
		return
	}
	attempts, err := in.bg.webhooks.Send(ctx, webhook.Delivery{URL: target, Body: body})
	switch {
	case err == nil:
		in.log.Debug("bread: webhook delivered", append(attrs, "attempt", attempts)...)
	case errors.Is(err, webhook.ErrAbandoned):
		in.log.Warn("bread: webhook retry abandoned: the instance is stopping", append(attrs, "attempts", attempts, "error", err)...)
	default:
		in.log.Warn("bread: webhook delivery failed", append(attrs, "attempts", attempts, "error", err)...)
	}
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

// WebhookSender is the Instance's Sender (Config.Webhooks: its secret,
// host allow-list, private-network guard, attempts and backoff), for a
// plugin that delivers webhooks of its own (protocols/a2a's push
// notifications) under the same rules. The Instance closes it in Stop; a
// plugin must not.
func (in *Instance) WebhookSender() *webhook.Sender { return in.bg.webhooks }
