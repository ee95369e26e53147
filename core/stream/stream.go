package stream

import (
	"context"
	"iter"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/internal/hub"
)

// Options bound the transport's memory. Zero values take the defaults.
type Options struct {
	// MaxBytesPerRun bounds each run's replay buffer (default 256 KiB),
	// counting a delta as its text plus FrameOverhead and any other crumb
	// as CrumbBytes. Frames at or above the run's Frame.Durable floor (not
	// in the crumb log yet) are kept beyond it.
	MaxBytesPerRun int
	// MaxFramesPerRun, when positive, also bounds the frames each run's
	// buffer keeps; like MaxBytesPerRun it never drops a frame at or above
	// the floor.
	MaxFramesPerRun int
	// MaxPendingBytesPerRun bounds a run's buffer whatever its floor
	// (default 64 MiB): only a run whose crumb log stopped committing
	// without failing reaches it, and then loses its oldest frames.
	MaxPendingBytesPerRun int
	// MaxRuns is how many runs keep a replay buffer (default 1000).
	MaxRuns int
	// MaxSubscriberLag is how many frames a subscriber may fall behind
	// before it is ended with ErrSlowSubscriber (default 10000).
	MaxSubscriberLag int
}

// How the buffer counts a frame: the text of a delta (text, reasoning, tool
// input) plus FrameOverhead (the frame and crumb structs it holds), and
// CrumbBytes for any other crumb, whose payload is not measured.
const (
	FrameOverhead = 128
	CrumbBytes    = 1024
)

// ErrSlowSubscriber ends a subscription that fell too far behind.
var ErrSlowSubscriber = hub.ErrSlowSubscriber

// Transport is the embedded duplex transport. It is safe for concurrent use.
type Transport struct {
	h *hub.Hub[core.Frame]
}

var (
	_ core.BreadBus   = (*Transport)(nil)
	_ core.Subscriber = (*Transport)(nil)
)

// New returns an embedded transport.
func New(opts Options) *Transport {
	return &Transport{h: hub.New(hub.Options{
		MaxBytesPerKey:        opts.MaxBytesPerRun,
		MaxPerKey:             opts.MaxFramesPerRun,
		MaxPendingBytesPerKey: opts.MaxPendingBytesPerRun,
		MaxKeys:               opts.MaxRuns,
		MaxQueue:              opts.MaxSubscriberLag,
	}, func(f core.Frame) int64 { return f.Seq }, frameBytes)}
}

// frameBytes is what a frame counts against its run's buffer.
func frameBytes(f core.Frame) int {
	switch c := f.Crumb.(type) {
	case *core.TextDelta:
		return FrameOverhead + len(c.Delta)
	case *core.ReasoningDelta:
		return FrameOverhead + len(c.Delta)
	case *core.ToolInputDelta:
		return FrameOverhead + len(c.Delta)
	}
	return CrumbBytes
}

// Capability reports Duplex.
func (t *Transport) Capability() core.Capability { return core.Duplex }

// Publish buffers f for replay and hands it to the run's subscribers. It
// never blocks and never fails. The run's buffer keeps every frame at or
// above f.Durable.
func (t *Transport) Publish(_ context.Context, f core.Frame) error {
	t.h.Publish(f.RunID, f, f.Durable)
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
