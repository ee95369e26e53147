package stream

import (
	"context"
	"iter"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/internal/hub"
)

// Options bound the transport's memory. Zero values take the defaults.
type Options struct {
	// MaxFramesPerRun is the replay buffer of each run (default 1000).
	MaxFramesPerRun int
	// MaxRuns is how many runs keep a replay buffer (default 1000).
	MaxRuns int
	// MaxSubscriberLag is how many frames a subscriber may fall behind
	// before it is ended with ErrSlowSubscriber (default 10000).
	MaxSubscriberLag int
}

// ErrSlowSubscriber ends a subscription that fell too far behind.
var ErrSlowSubscriber = hub.ErrSlowSubscriber

// Transport is the embedded duplex transport. It is safe for concurrent use.
type Transport struct {
	h *hub.Hub[core.Frame]
}

var (
	_ core.BreadTransport = (*Transport)(nil)
	_ core.Subscriber     = (*Transport)(nil)
)

// New returns an embedded transport.
func New(opts Options) *Transport {
	return &Transport{h: hub.New(hub.Options{
		MaxPerKey: opts.MaxFramesPerRun,
		MaxKeys:   opts.MaxRuns,
		MaxQueue:  opts.MaxSubscriberLag,
	}, func(f core.Frame) int64 { return f.Seq })}
}

// Capability reports Duplex.
func (t *Transport) Capability() core.Capability { return core.Duplex }

// Publish buffers f for replay and hands it to the run's subscribers. It
// never blocks and never fails.
func (t *Transport) Publish(_ context.Context, f core.Frame) error {
	t.h.Publish(f.RunID, f)
	return nil
}

// Subscribe replays the run's buffered frames with Seq > afterSeq, then
// yields live frames until ctx is done or the range stops.
func (t *Transport) Subscribe(ctx context.Context, runID string, afterSeq int64) iter.Seq2[core.Frame, error] {
	return t.h.Subscribe(ctx, runID, afterSeq)
}

// Watch implements core.Watcher: the same subscription, waited on as a
// channel, with no goroutine.
func (t *Transport) Watch(runID string, afterSeq int64) core.Watch {
	return t.h.Watch(runID, afterSeq)
}
