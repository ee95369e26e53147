//go:build unix

package redis_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	bredis "github.com/breadai/bread/transports/redis"
)

// TestPublishIsBoundedWhileRedisHangs stops a private redis-server with
// SIGSTOP: connections stay open and writes hang rather than fail, the
// worst case for a publisher. Only the first Publish into the full queue
// waits (PublishTimeout); the rest drop the oldest frames at once.
func TestPublishIsBoundedWhileRedisHangs(t *testing.T) {
	r := startPrivateRedis(t)
	const timeout = 100 * time.Millisecond
	tr := newPrivateTransport(t, r, bredis.Options{QueueSize: 5, PublishTimeout: timeout})
	run := runID(t)
	publishRange(t, tr, run, 1, 1)
	flush(t, tr)

	if err := r.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = r.cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	defer resume()

	const n = 50
	began := time.Now()
	for i := int64(2); i <= n; i++ {
		start := time.Now()
		if err := tr.Publish(context.Background(), frame(run, i)); err != nil {
			t.Fatalf("Publish %d: %v", i, err)
		}
		if d := time.Since(start); d > publishBound {
			t.Fatalf("Publish %d took %v while Redis hung", i, d)
		}
	}
	// Had every full-queue Publish waited, this would be 45 timeouts.
	if total := time.Since(began); total > 10*timeout+2*time.Second {
		t.Fatalf("%d publishes took %v while Redis hung", n-1, total)
	}
	if st := tr.Stats(); st.Dropped == 0 {
		t.Fatalf("nothing dropped from a 5-frame queue: %+v", st)
	}

	resume()
	flush(t, tr)
	sub := collect(t, tr, run, n-5)
	sub.waitSeqs(t, 10*time.Second, seqRange(n-4, n)...)
	expectLagged(t, collect(t, tr, run, 0)) // the drops left a gap
}
