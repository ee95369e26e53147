package httpstream

import (
	"context"
	"errors"
	"sync"

	"github.com/breadai/bread/core"
)

// maxLiveQueue bounds the frames a passive stream holds for a client that
// reads slower than the run writes; past it the stream catches up from the
// log instead.
const maxLiveQueue = 10000

var errLiveOverflow = errors.New("httpstream: the client fell too far behind the live frames")

// liveFeed runs one subscription on its own goroutine and queues its frames,
// so a stream can subscribe first and read the log while frames arrive. The
// stream that calls follow owns the goroutine and ends it with stop. A
// subscriber that is a core.Watcher needs no goroutine: the feed waits on
// its watch instead.
type liveFeed struct {
	cancel context.CancelFunc
	done   chan struct{}
	signal <-chan struct{} // what the stream waits on
	notify chan struct{}   // signal's send side, for the goroutine
	watch  core.Watch

	mu    sync.Mutex
	queue []core.Frame
	err   error
	ended bool
}

func follow(ctx context.Context, sub core.Subscriber, runID string, after int64) *liveFeed {
	if w, ok := sub.(core.Watcher); ok {
		watch := w.Watch(runID, after)
		return &liveFeed{watch: watch, signal: watch.Ready()}
	}
	ctx, cancel := context.WithCancel(ctx)
	notify := make(chan struct{}, 1)
	l := &liveFeed{cancel: cancel, done: make(chan struct{}), signal: notify, notify: notify}
	go l.run(ctx, sub, runID, after)
	return l
}

func (l *liveFeed) run(ctx context.Context, sub core.Subscriber, runID string, after int64) {
	defer close(l.done)
	defer func() {
		l.mu.Lock()
		l.ended = true
		l.mu.Unlock()
		l.wake()
	}()
	for f, err := range sub.Subscribe(ctx, runID, after) {
		l.mu.Lock()
		switch {
		case err != nil:
			l.err = err
		case len(l.queue) >= maxLiveQueue:
			l.err = errLiveOverflow
		default:
			l.queue = append(l.queue, f)
		}
		failed := l.err != nil
		l.mu.Unlock()
		l.wake()
		if failed {
			return
		}
	}
}

func (l *liveFeed) wake() {
	select {
	case l.notify <- struct{}{}:
	default:
	}
}

// take moves the queued frames into buf. ended reports whether the
// subscription stopped, err why it failed; frames queued before either are still returned.
func (l *liveFeed) take(buf []core.Frame) (frames []core.Frame, ended bool, err error) {
	if l.watch != nil {
		frames, err = l.watch.Take(buf)
		return frames, err != nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	buf = append(buf, l.queue...)
	clear(l.queue)
	l.queue = l.queue[:0]
	return buf, l.ended, l.err
}

// stop ends the subscription and waits for its goroutine.
func (l *liveFeed) stop() {
	if l.watch != nil {
		l.watch.Close()
		return
	}
	l.cancel()
	<-l.done
}
