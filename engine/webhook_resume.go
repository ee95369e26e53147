package engine

import (
	"context"
	"maps"

	"github.com/breadai/bread/core"
)

// webhookMetaKey is the checkpoint meta key that carries a background run's
// webhook across a suspension, so the resume that continues the run tells
// the webhook how it ended too.
const webhookMetaKey = "bread.webhook"

// webhookKey carries a background run's webhook URL on its context.
type webhookKey struct{}

func withWebhook(ctx context.Context, url string) context.Context {
	if url == "" {
		return ctx
	}
	return context.WithValue(ctx, webhookKey{}, url)
}

// webhookFrom is the webhook of the run of ctx: the background run's own,
// or the one its checkpoint carried into a resume.
func webhookFrom(ctx context.Context) string {
	if url, _ := ctx.Value(webhookKey{}).(string); url != "" {
		return url
	}
	return core.CheckpointMetaFrom(ctx)[webhookMetaKey]
}

// withWebhookMeta adds the run's webhook to the meta of its checkpoints. A
// run inside a composition has none of its own: its composition's end is
// what a webhook reports.
func (r *run) withWebhookMeta(ctx context.Context, meta map[string]string) map[string]string {
	url := webhookFrom(ctx)
	if url == "" || r.parent != nil {
		return meta
	}
	meta = maps.Clone(meta)
	if meta == nil {
		meta = map[string]string{}
	}
	meta[webhookMetaKey] = url
	return meta
}

// resumeWebhook is the webhook a resume of checkpointID must tell when the
// continued run ends: the one its background run was started with.
func (in *Instance) resumeWebhook(ctx context.Context, checkpointID string) (runJob, string) {
	cp, err := in.store.GetCheckpoint(ctx, checkpointID)
	if err != nil || cp.Parent != nil || cp.Meta[webhookMetaKey] == "" {
		return runJob{}, ""
	}
	return runJob{RunID: cp.RunID, AgentID: cp.AgentID, Webhook: cp.Meta[webhookMetaKey]}, cp.SessionID
}
