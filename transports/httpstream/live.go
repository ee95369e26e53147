package httpstream

import (
	"context"
	"errors"

	"github.com/breadai/bread/core"
)

// liveFeed is one subscription a passive stream waits on, so it can
// subscribe first and read the log while frames arrive: the bus's Watch
// (core.Bus.Watch: no goroutine on a bus that is a core.Watcher, one the
// watch owns on any other). The stream that calls follow owns it and ends
// it with stop.
type liveFeed struct {
	watch  core.Watch
	signal <-chan struct{} // what the stream waits on
}

func follow(ctx context.Context, bus *core.Bus, runID string, after int64) *liveFeed {
	w := bus.Watch(ctx, runID, after)
	return &liveFeed{watch: w, signal: w.Ready()}
}

// take moves the queued frames into buf. ended reports whether the
// subscription stopped, err why it failed (nil when the bus just ended
// it); frames queued before either are still returned.
func (l *liveFeed) take(buf []core.Frame) (frames []core.Frame, ended bool, err error) {
	frames, err = l.watch.Take(buf)
	if errors.Is(err, core.ErrSubscriptionEnded) {
		return frames, true, nil
	}
	return frames, err != nil, err
}

// stop ends the subscription (and the watch's goroutine, if it has one).
func (l *liveFeed) stop() { l.watch.Close() }
