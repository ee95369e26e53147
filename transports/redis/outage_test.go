package redis_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	bredis "github.com/breadai/bread/transports/redis"
)

// publishBound is how long a Publish may take while Redis is down: the
// configured PublishTimeout plus room for a loaded CI machine. It checks
// that Publish is bounded by the timeout, not by Redis.
const publishBound = 100*time.Millisecond + 2*time.Second

func TestPublishSurvivesAnOutage(t *testing.T) {
	r := startPrivateRedis(t)
	tr := newPrivateTransport(t, r, bredis.Options{PublishTimeout: 100 * time.Millisecond})
	run := runID(t)

	publishRange(t, tr, run, 1, 3)
	flush(t, tr)

	r.stop()
	for i := int64(4); i <= 10; i++ {
		began := time.Now()
		if err := tr.Publish(context.Background(), frame(run, i)); err != nil {
			t.Fatalf("Publish during the outage returned %v; an outage must never fail a run", err)
		}
		if d := time.Since(began); d > publishBound {
			t.Fatalf("Publish took %v during the outage", d)
		}
	}
	// The publisher finds Redis gone and keeps the frames queued.
	waitFor(t, 10*time.Second, "a failed write attempt", func() bool { return tr.Stats().Failures > 0 })
	if q := tr.Stats().Queued; q != 7 {
		t.Fatalf("queued %d frames during the outage, want 7", q)
	}

	r.restart() // an empty Redis: the private server keeps nothing on disk
	publishRange(t, tr, run, 11, 12)
	flush(t, tr)

	// Frames queued during the outage went out first, in order, then the
	// ones published after Redis came back.
	sub := collect(t, tr, run, 3)
	sub.waitSeqs(t, 10*time.Second, seqRange(4, 12)...)
	// Frames 1 to 3 lived only in the Redis that restarted empty: a reader
	// that wants them is told, not handed frame 4 as if it followed.
	expectLagged(t, collect(t, tr, run, 0))
	if st := tr.Stats(); st.Dropped != 0 || st.Queued != 0 {
		t.Fatalf("stats after recovery: %+v", st)
	}
}

func TestFullQueueDropsOldestWithoutBlocking(t *testing.T) {
	r := startPrivateRedis(t)
	var logs logBuffer
	tr := newPrivateTransport(t, r, bredis.Options{
		QueueSize:      5,
		PublishTimeout: 100 * time.Millisecond,
		Logger:         newLogger(&logs),
	})
	run := runID(t)
	r.stop()

	for i := int64(1); i <= 20; i++ {
		began := time.Now()
		if err := tr.Publish(context.Background(), frame(run, i)); err != nil {
			t.Fatalf("Publish %d: %v", i, err)
		}
		if d := time.Since(began); d > publishBound {
			t.Fatalf("Publish %d took %v with a full queue and Redis down", i, d)
		}
	}
	if st := tr.Stats(); st.Dropped != 15 || st.Queued != 5 {
		t.Fatalf("stats with a full queue: %+v, want 15 dropped and 5 queued", st)
	}
	if !strings.Contains(logs.String(), "publish queue full") {
		t.Fatalf("no warning about dropped frames; log:\n%s", logs.String())
	}

	r.restart()
	flush(t, tr)
	// The newest five survive, in order, each naming the one before it.
	sub := collect(t, tr, run, 15)
	sub.waitSeqs(t, 10*time.Second, seqRange(16, 20)...)
	// A reader from before them meets the gap the drops left (a write
	// attempt that began before the drops may have delivered a few of the
	// first frames) and is told so.
	expectLagged(t, collect(t, tr, run, 0))
}

func TestSubscriberSurvivesARestart(t *testing.T) {
	r := startPrivateRedis(t)
	tr := newPrivateTransport(t, r, bredis.Options{BlockTimeout: 200 * time.Millisecond})
	run := runID(t)

	sub := collect(t, tr, run, 0)
	publishRange(t, tr, run, 1, 3)
	sub.waitSeqs(t, 10*time.Second, 1, 2, 3)

	r.stop()
	waitFor(t, 10*time.Second, "the subscription to lose its connection", func() bool { return tr.Stats().ReadFailures > 0 })
	r.restart()

	publishRange(t, tr, run, 4, 6)
	sub.waitSeqs(t, 20*time.Second, 1, 2, 3, 4, 5, 6)
	if errs := sub.errors(); len(errs) > 0 {
		t.Fatalf("the subscription yielded errors across the restart: %v", errs)
	}
}

func TestSubscriberStartedDuringAnOutage(t *testing.T) {
	r := startPrivateRedis(t)
	tr := newPrivateTransport(t, r, bredis.Options{})
	run := runID(t)
	r.stop()

	sub := collect(t, tr, run, 0)
	publishRange(t, tr, run, 1, 2)
	r.restart()
	sub.waitSeqs(t, 20*time.Second, 1, 2)
}

// expectLagged waits for a subscription to end with ErrSubscriberLagged,
// having yielded frames in order only.
func expectLagged(t *testing.T, c *collector) {
	t.Helper()
	waitFor(t, 10*time.Second, "ErrSubscriberLagged", func() bool { return len(c.errors()) > 0 })
	if errs, seqs := c.errors(), c.seqs(); !errors.Is(errs[0], bredis.ErrSubscriberLagged) || !slices.IsSorted(seqs) {
		t.Fatalf("frames %v, errors %v; want ErrSubscriberLagged at the gap", seqs, errs)
	}
}
