package nats_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/breadai/bread/core"
	bnats "github.com/breadai/bread/transports/nats"
)

// A stream bounded by MaxBytes discards a run's oldest frames. A
// subscriber asking for frames the stream no longer holds ends with
// ErrSubscriberLagged (it catches up from the crumb log) instead of
// starting silently at the oldest frame left; one asking only for frames
// still held gets them.
func TestDiscardedFramesEndWithSubscriberLagged(t *testing.T) {
	url := sharedNATSURL(t)
	t.Run("within one call", func(t *testing.T) {
		// A frame is about 300 bytes stored: 4 KiB holds the last few of 200.
		tr := newTransport(t, url, bnats.Options{MaxBytes: 4096})
		run := runID(t)
		publishRange(t, tr, run, 1, 200)
		flush(t, tr)
		expectLagged(t, tr, run, 0, 200)
		expectLagged(t, tr, run, 150, 200)
		collect(t, tr, run, 196).waitSeqs(t, 10*time.Second, 197, 198, 199, 200)
	})
	t.Run("a later call's first frame held, the first call's discarded", func(t *testing.T) {
		// The run ends its first call at 195 (here agent:run:end) and a
		// later one publishes 196..200; then the stream keeps only the
		// last 5 frames (a purge puts the limit's cut exactly there).
		n := testNames(t, url)
		tr := newTransport(t, url, bnats.Options{Stream: n.stream, SubjectPrefix: n.prefix})
		run := runID(t)
		publishRange(t, tr, run, 1, 194)
		end := core.Frame{RunID: run, Seq: 195, Crumb: &core.AgentRunEnd{CrumbBase: base(run, 195)}}
		if err := tr.Publish(context.Background(), end); err != nil {
			t.Fatal(err)
		}
		publishRange(t, tr, run, 196, 200)
		flush(t, tr)
		keepLast(t, url, n.stream, tr.Subject(run), 5)
		expectLagged(t, tr, run, 0, 200)
		expectLagged(t, tr, run, 194, 200)
		collect(t, tr, run, 195).waitSeqs(t, 10*time.Second, 196, 197, 198, 199, 200)
	})
}

// keepLast purges all but the last keep messages of subject from stream.
func keepLast(t *testing.T, url, stream, subject string, keep uint64) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(t.Context(), stream)
	if err == nil {
		err = st.Purge(t.Context(), jetstream.WithPurgeSubject(subject), jetstream.WithPurgeKeep(keep))
	}
	if err != nil {
		t.Fatal(err)
	}
}

// expectLagged subscribes to run after afterSeq and wants
// ErrSubscriberLagged before any frame (the run's last frame is last).
func expectLagged(t *testing.T, tr *bnats.Transport, run string, afterSeq, last int64) {
	t.Helper()
	c := collect(t, tr, run, afterSeq)
	waitFor(t, 10*time.Second, "the subscription to end or reach the last frame", func() bool {
		s := c.seqs()
		return len(c.errors()) > 0 || (len(s) > 0 && s[len(s)-1] == last)
	})
	errs := c.errors()
	if len(errs) != 1 || !errors.Is(errs[0], bnats.ErrSubscriberLagged) || len(c.seqs()) != 0 {
		t.Fatalf("after %d: frames %v, errors %v; want ErrSubscriberLagged and no frame", afterSeq, c.seqs(), errs)
	}
	var be *core.BreadError
	if !errors.As(errs[0], &be) || be.Code != bnats.CodeSubscriberLagged {
		t.Fatalf("error %v is not a BreadError with code %s", errs[0], bnats.CodeSubscriberLagged)
	}
}
