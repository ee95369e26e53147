package transporttest

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

// subscription consumes one Subscribe range in the background and records
// what it receives.
type subscription struct {
	timeout time.Duration
	cancel  context.CancelFunc
	done    chan struct{}
	changed chan struct{}

	mu      sync.Mutex
	frames  []core.Frame
	err     error
	stop    int  // stop ranging after this many frames (-1: never)
	stalled bool // stop reading but keep the range open
}

func (s *subscription) consume(ctx context.Context, sub core.Subscriber, run string, afterSeq int64) {
	defer close(s.done)
	for f, err := range sub.Subscribe(ctx, run, afterSeq) {
		s.mu.Lock()
		if err != nil {
			s.err = err
			s.mu.Unlock()
			s.notify()
			return
		}
		s.frames = append(s.frames, f)
		stop := s.stop >= 0 && len(s.frames) >= s.stop
		stalled := s.stalled
		s.mu.Unlock()
		s.notify()
		if stop {
			return
		}
		if stalled {
			<-ctx.Done()
			return
		}
	}
}

func (s *subscription) notify() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *subscription) got() []core.Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.frames)
}

func (s *subscription) stopAfter(n int) {
	s.mu.Lock()
	s.stop = n
	reached := len(s.frames) >= n
	s.mu.Unlock()
	if reached {
		s.cancel()
	}
}

func (s *subscription) stall() {
	s.mu.Lock()
	s.stalled = true
	s.mu.Unlock()
}

func (s *subscription) waitDone(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(d):
		t.Fatalf("subscription did not end")
	}
}

// waitCount waits until n frames arrived.
func (s *subscription) waitCount(t *testing.T, n int) {
	t.Helper()
	deadline := time.NewTimer(s.timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		have, err := len(s.frames), s.err
		s.mu.Unlock()
		if have >= n {
			return
		}
		if err != nil {
			t.Fatalf("subscription ended with %v after %d of %d frames", err, have, n)
		}
		select {
		case <-s.changed:
		case <-s.done:
			s.mu.Lock()
			have = len(s.frames)
			s.mu.Unlock()
			if have < n {
				t.Fatalf("subscription ended after %d of %d frames", have, n)
			}
			return
		case <-deadline.C:
			t.Fatalf("timed out with %d of %d frames", have, n)
		}
	}
}

// expectSeqs waits for len(want) frames and checks their seqs, in order.
func (s *subscription) expectSeqs(t *testing.T, want ...int64) {
	t.Helper()
	s.waitCount(t, len(want))
	got := s.got()
	seqs := make([]int64, len(got))
	for i, f := range got {
		seqs[i] = f.Seq
	}
	if !slices.Equal(seqs[:len(want)], want) {
		i := 0
		for i < len(want) && seqs[i] == want[i] {
			i++
		}
		t.Fatalf("seqs differ at index %d: got %v, want %v", i, head(seqs[i:]), head(want[i:]))
	}
	if len(got) > len(want) {
		t.Fatalf("got %d frames, want %d: seqs %v", len(got), len(want), seqs)
	}
}

// expectQuiet checks that nothing more arrives for d.
func (s *subscription) expectQuiet(t *testing.T, d time.Duration) {
	t.Helper()
	before := len(s.got())
	time.Sleep(d)
	if after := len(s.got()); after != before {
		t.Fatalf("got %d unexpected frames", after-before)
	}
}

// waitAttached gives a subscription without a probe frame a moment to
// attach; transports exposing a subscriber count are waited on exactly.
func (s *subscription) waitAttached(ctx context.Context, tr core.BreadBus, run string) {
	if c, ok := tr.(interface{ Subscribers(runID string) int }); ok {
		for ctx.Err() == nil && c.Subscribers(run) == 0 {
			time.Sleep(time.Millisecond)
		}
		return
	}
	time.Sleep(200 * time.Millisecond)
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func head(s []int64) []int64 {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}
