package redis_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	bredis "github.com/breadai/bread/transports/redis"
)

func TestMaxLenTrimsTheStream(t *testing.T) {
	url := sharedRedisURL(t)
	tr := newTransport(t, url, bredis.Options{MaxLen: 10})
	run := runID(t)
	const n = 1000
	publishRange(t, tr, run, 1, n)
	flush(t, tr)

	c := rawClient(t, url)
	defer c.Close()
	length, err := c.XLen(context.Background(), tr.StreamKey(run)).Result()
	if err != nil {
		t.Fatal(err)
	}
	// MAXLEN ~ trims whole radix-tree nodes (stream-node-max-entries, 100
	// by default), so the stream keeps at least 10 and far fewer than n.
	if length < 10 || length >= n/2 {
		t.Fatalf("XLEN = %d after %d frames with MaxLen 10", length, n)
	}

	// Replay yields what is retained after afterSeq: the newest frames, in
	// order. From before them it would skip the trimmed ones, so it ends
	// with ErrSubscriberLagged instead: the reader goes to the store.
	sub := collect(t, tr, run, n-length)
	sub.waitSeqs(t, 10*time.Second, seqRange(n-length+1, n)...)
	from0 := collect(t, tr, run, 0)
	waitFor(t, 10*time.Second, "a replay from 0 to fail", func() bool { return len(from0.errors()) > 0 })
	if errs, seqs := from0.errors(), from0.seqs(); !errors.Is(errs[0], bredis.ErrSubscriberLagged) || len(seqs) != 0 {
		t.Fatalf("a replay from 0 of a trimmed stream: frames %v, errors %v", seqs, errs)
	}
}

// A frame published with a durable floor stays until a later floor passes
// it, far past MaxLen: the frames the crumb log does not hold yet all
// replay. Then the stream is trimmed below the new floor, and a reader
// still behind it ends with ErrSubscriberLagged rather than skip frames.
func TestDurableFloorRetention(t *testing.T) {
	url := sharedRedisURL(t)
	tr := newTransport(t, url, bredis.Options{MaxLen: 10})
	run := runID(t)
	ctx := context.Background()
	publish := func(seq, floor int64, n int) {
		for range n {
			f := frame(run, seq)
			if n > 1 {
				f.Crumb = &core.TextDelta{CrumbBase: base(run, seq), Delta: "x"}
			}
			f.Durable = floor
			if err := tr.Publish(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
	}
	publish(1, 1, 1)
	publish(1, 1, 500) // a window of 500 deltas at watermark 1
	flush(t, tr)
	first := collect(t, tr, run, 0)
	first.waitSeqs(t, 10*time.Second, append([]int64{1}, repeat(1, 500)...)...)

	c := rawClient(t, url)
	defer c.Close()
	publish(3, 3, 1) // the window's entry (seq 2) is committed
	publish(3, 3, 300)
	flush(t, tr)
	length, err := c.XLen(ctx, tr.StreamKey(run)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if length < 301 || length > 400 {
		t.Fatalf("XLEN = %d: want the 301 frames at or above floor 3, and the trim's node slack at most", length)
	}
	after2 := collect(t, tr, run, 2)
	after2.waitSeqs(t, 10*time.Second, append([]int64{3}, repeat(3, 300)...)...)
	from0 := collect(t, tr, run, 0)
	waitFor(t, 10*time.Second, "a reader from before the floor to fail", func() bool { return len(from0.errors()) > 0 })
	if !errors.Is(from0.errors()[0], bredis.ErrSubscriberLagged) {
		t.Fatalf("a reader from before the floor: %v", from0.errors())
	}
}

func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestStreamExpiresAfterTheTerminalCrumb(t *testing.T) {
	url := sharedRedisURL(t)
	c := rawClient(t, url)
	defer c.Close()
	ctx := context.Background()

	terminals := map[string]func(run string, seq int64) core.Frame{
		"agent:run:end": endFrame,
		"agent:error": func(run string, seq int64) core.Frame {
			return core.Frame{RunID: run, Seq: seq, Crumb: &core.AgentError{CrumbBase: base(run, seq), Error: &core.BreadError{Code: core.CodeAgentError, Message: "boom"}}}
		},
	}
	cases := []struct {
		name    string
		idleTTL time.Duration
		before  func(pttl time.Duration) bool // the key's PTTL before the terminal crumb
		ttl     time.Duration
	}{
		{"no idle expiry", -1, func(d time.Duration) bool { return d == -1 }, 30 * time.Minute},
		{"idle expiry refreshed by writes", 48 * time.Hour, func(d time.Duration) bool { return d > 47*time.Hour && d <= 48*time.Hour }, 30 * time.Minute},
	}
	for _, tc := range cases {
		for kind, terminal := range terminals {
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				tr := newTransport(t, url, bredis.Options{TTL: tc.ttl, IdleTTL: tc.idleTTL})
				run := runID(t)
				key := tr.StreamKey(run)
				publishRange(t, tr, run, 1, 3)
				flush(t, tr)
				before, err := c.PTTL(ctx, key).Result()
				if err != nil {
					t.Fatal(err)
				}
				if !tc.before(before) {
					t.Fatalf("PTTL before the terminal crumb = %v", before)
				}
				if err := tr.Publish(ctx, terminal(run, 4)); err != nil {
					t.Fatal(err)
				}
				flush(t, tr)
				after, err := c.PTTL(ctx, key).Result()
				if err != nil {
					t.Fatal(err)
				}
				if after <= tc.ttl-time.Minute || after > tc.ttl {
					t.Fatalf("PTTL after %s = %v, want about %v", kind, after, tc.ttl)
				}
			})
		}
	}
}

func TestTerminalStreamIsRemovedWhenTTLPasses(t *testing.T) {
	url := sharedRedisURL(t)
	tr := newTransport(t, url, bredis.Options{TTL: 50 * time.Millisecond})
	run := runID(t)
	publishRange(t, tr, run, 1, 2)
	if err := tr.Publish(context.Background(), endFrame(run, 3)); err != nil {
		t.Fatal(err)
	}
	flush(t, tr)
	c := rawClient(t, url)
	defer c.Close()
	waitFor(t, 10*time.Second, "the stream to expire", func() bool {
		n, err := c.Exists(context.Background(), tr.StreamKey(run)).Result()
		return err == nil && n == 0
	})
}

func TestStreamKeyLayout(t *testing.T) {
	tr, err := bredis.New(bredis.Options{URL: "redis://127.0.0.1:1/0"})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if got, want := tr.StreamKey("r-1"), "bread:run:{r-1}"; got != want {
		t.Fatalf("StreamKey = %q, want %q", got, want)
	}
}
