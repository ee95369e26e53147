package core

import (
	"context"
	"iter"

	"github.com/breadai/bread/core/internal/hub"
)

// localTransport is the embedded default when Config.Transport is nil: the
// same in-process fan-out as core/stream, for a single replica.
type localTransport struct{ h *hub.Hub[Frame] }

func newLocalTransport() *localTransport {
	return &localTransport{h: hub.New(hub.Options{}, frameSeq)}
}

func frameSeq(f Frame) int64 { return f.Seq }

func (t *localTransport) Capability() Capability { return Duplex }

func (t *localTransport) Publish(_ context.Context, f Frame) error {
	t.h.Publish(f.RunID, f)
	return nil
}

func (t *localTransport) Subscribe(ctx context.Context, runID string, afterSeq int64) iter.Seq2[Frame, error] {
	return t.h.Subscribe(ctx, runID, afterSeq)
}
