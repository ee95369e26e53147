package redis_test

import (
	"context"
	"crypto/rand"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	bredis "github.com/breadai/bread/transports/redis"
	goredis "github.com/redis/go-redis/v9"
)

func TestCloseReleasesEverything(t *testing.T) {
	url := sharedRedisURL(t)
	raw := rawClient(t, url)
	defer raw.Close()
	ctx := context.Background()
	before := runtime.NumGoroutine()

	// A client name of its own lets the test count this transport's
	// connections on a server other tests share.
	name := "bread-close-test-" + rand.Text()[:8]
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	prefix := testPrefix(t, url)
	tr, err := bredis.New(bredis.Options{URL: url + sep + "client_name=" + name, KeyPrefix: prefix, BlockTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tr.Ping(ctx); err != nil {
		t.Fatalf("Ping on a started transport: %v", err)
	}
	runs := []string{runID(t), runID(t)}
	var subs []*collector
	for _, run := range runs {
		subs = append(subs, collect(t, tr, run, 0))
		waitFor(t, 10*time.Second, "the subscription to tail", func() bool { return tr.Subscribers(run) == 1 })
	}
	for _, run := range runs {
		publishRange(t, tr, run, 1, 3)
	}
	for _, s := range subs {
		s.waitSeqs(t, 10*time.Second, 1, 2, 3)
	}
	if n := connections(t, raw, name); n < 3 {
		t.Fatalf("%d connections named %s before Close, want the writer's and one per subscription", n, name)
	}

	// Close ends subscriptions blocked in a one-minute XREAD at once.
	if err := tr.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, s := range subs {
		s.waitDone(t, 10*time.Second)
		if errs := s.errors(); len(errs) != 1 || !errors.Is(errs[0], bredis.ErrClosed) {
			t.Fatalf("a subscription ended by Close yielded %v, want ErrClosed", errs)
		}
	}
	if err := tr.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := tr.Publish(ctx, frame(runs[0], 4)); !errors.Is(err, bredis.ErrClosed) {
		t.Fatalf("Publish after Close = %v, want ErrClosed", err)
	}
	for _, err := range tr.Subscribe(ctx, runs[0], 0) {
		if !errors.Is(err, bredis.ErrClosed) {
			t.Fatalf("Subscribe after Close yielded %v, want ErrClosed", err)
		}
	}
	if err := tr.Ping(ctx); !errors.Is(err, bredis.ErrClosed) {
		t.Fatalf("Transport.Ping after Close = %v, want ErrClosed", err)
	}
	if err := tr.Client().Ping(ctx).Err(); !isClosed(err) {
		t.Fatalf("the client the transport dialled is still open: Ping = %v", err)
	}
	waitFor(t, 10*time.Second, "the server to see no connection of the closed transport", func() bool {
		return connections(t, raw, name) == 0
	})
	waitFor(t, 10*time.Second, "goroutines to return to the baseline", func() bool {
		return runtime.NumGoroutine() <= before+1 // the raw client may hold a reader
	})
}

// connections counts the server's clients named name.
func connections(t *testing.T, raw *goredis.Client, name string) int {
	t.Helper()
	list, err := raw.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatalf("CLIENT LIST: %v", err)
	}
	n := 0
	for line := range strings.Lines(list) {
		if strings.Contains(line, " name="+name+" ") {
			n++
		}
	}
	return n
}

func TestCloseLeavesTheCallersClientOpen(t *testing.T) {
	url := sharedRedisURL(t)
	c := rawClient(t, url)
	defer c.Close()
	tr := newTransport(t, url, bredis.Options{Client: c})
	run := runID(t)
	publishRange(t, tr, run, 1, 2)
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := c.XLen(context.Background(), tr.StreamKey(run)).Result(); err != nil || n != 2 {
		t.Fatalf("after Close: XLEN = %d, %v; want the queued frames written and the client open", n, err)
	}
}

func TestCloseGivesUpOnADeadRedis(t *testing.T) {
	r := startPrivateRedis(t)
	tr := newPrivateTransport(t, r, bredis.Options{CloseTimeout: 200 * time.Millisecond})
	run := runID(t)
	r.stop()
	publishRange(t, tr, run, 1, 5)
	done := make(chan error, 1)
	go func() { done <- tr.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Close hung on a dead Redis")
	}
	if st := tr.Stats(); st.Dropped != 5 || st.Queued != 0 {
		t.Fatalf("stats after Close: %+v, want the 5 unwritten frames dropped", st)
	}
}

func TestCancelInterruptsABlockedRead(t *testing.T) {
	url := sharedRedisURL(t)
	tr := newTransport(t, url, bredis.Options{BlockTimeout: time.Hour})
	run := runID(t)
	sub := collect(t, tr, run, 0)
	waitFor(t, 10*time.Second, "the subscription to tail", func() bool { return tr.Subscribers(run) == 1 })
	sub.cancel()
	// Far below the hour the XREAD would otherwise block.
	sub.waitDone(t, 10*time.Second)
	if errs := sub.errors(); len(errs) > 0 {
		t.Fatalf("a cancelled subscription yielded %v", errs)
	}
	if n := tr.Subscribers(run); n != 0 {
		t.Fatalf("Subscribers = %d after the subscription ended", n)
	}
}

func TestLaggingSubscriber(t *testing.T) {
	url := sharedRedisURL(t)
	cases := []struct {
		name    string
		maxLen  int64
		publish int64 // frames published while the consumer is stuck on frame 1
		floor   bool  // each frame is published as durable: the trim follows it
		lagged  bool
	}{
		{"behind by less than MaxLen catches up", 1000, 600, false, false},
		{"trimmed past ends with ErrSubscriberLagged", 10, 1000, false, true},
		{"a durable floor past it ends it with ErrSubscriberLagged", 1000, 600, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTransport(t, url, bredis.Options{MaxLen: tc.maxLen})
			run := runID(t)
			publishRange(t, tr, run, 1, 1)
			flush(t, tr)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			first, resume := make(chan struct{}), make(chan struct{})
			type outcome struct {
				seqs []int64
				errs []error
			}
			result := make(chan outcome, 1)
			go func() {
				var o outcome
				for f, err := range tr.Subscribe(ctx, run, 0) {
					if err != nil {
						o.errs = append(o.errs, err)
						continue
					}
					o.seqs = append(o.seqs, f.Seq)
					if f.Seq == 1 {
						close(first)
						<-resume // a slow consumer: the stream grows meanwhile
					}
					if f.Seq == tc.publish {
						break
					}
				}
				result <- o
			}()
			<-first
			for seq := int64(2); seq <= tc.publish; seq++ {
				f := frame(run, seq)
				if tc.floor {
					f.Durable = seq
				}
				if err := tr.Publish(context.Background(), f); err != nil {
					t.Fatal(err)
				}
			}
			flush(t, tr)
			close(resume)

			var o outcome
			select {
			case o = <-result:
			case <-time.After(15 * time.Second):
				t.Fatal("the subscription neither caught up nor failed")
			}
			if !tc.lagged {
				if len(o.errs) > 0 || !slices.Equal(o.seqs, seqRange(1, tc.publish)) {
					t.Fatalf("got %d frames and errors %v; want 1..%d in order", len(o.seqs), o.errs, tc.publish)
				}
				return
			}
			if len(o.errs) != 1 || !errors.Is(o.errs[0], bredis.ErrSubscriberLagged) {
				t.Fatalf("a subscriber the trim passed yielded %v, want ErrSubscriberLagged", o.errs)
			}
			var be *core.BreadError
			if !errors.As(o.errs[0], &be) || be.Code != bredis.CodeSubscriberLagged {
				t.Fatalf("error %v is not a BreadError with code %s", o.errs[0], bredis.CodeSubscriberLagged)
			}
			if !slices.Equal(o.seqs, []int64{1}) {
				t.Fatalf("a lagged subscriber yielded frames %v past the gap", o.seqs)
			}
		})
	}
}
