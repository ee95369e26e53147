package nats_test

import (
	"context"
	"slices"
	"testing"
	"time"

	bnats "github.com/breadai/bread/transports/nats"
)

// BenchmarkPublish is the cost of Publish and one transport's write
// throughput to JetStream: b.N frames published, then flushed.
func BenchmarkPublish(b *testing.B) {
	url := sharedNATSURL(b)
	tr := newTransport(b, url, bnats.Options{QueueSize: 1 << 20, QueueBytes: 1 << 30})
	run := runID(b)
	b.ReportAllocs()
	b.ResetTimer()
	began := time.Now()
	for i := range b.N {
		if err := tr.Publish(context.Background(), frame(run, int64(i+1))); err != nil {
			b.Fatal(err)
		}
	}
	flush(b, tr)
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "frames/s")
	if st := tr.Stats(); st.Dropped > 0 {
		b.Fatalf("dropped %d frames", st.Dropped)
	}
}

// BenchmarkDeliveryLatency publishes frames one at a time on one
// transport and times each until a subscription on a second transport
// (its own connection, as another replica's) yields it: p50 and p99.
func BenchmarkDeliveryLatency(b *testing.B) {
	url := sharedNATSURL(b)
	n := testNames(b, url)
	opts := bnats.Options{Stream: n.stream, SubjectPrefix: n.prefix}
	pub := newTransport(b, url, opts)
	sub := newTransport(b, url, opts)
	run := runID(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan time.Time, 1)
	go func() {
		for _, err := range sub.Subscribe(ctx, run, 0) {
			if err != nil {
				return
			}
			got <- time.Now()
		}
	}()
	waitFor(b, 10*time.Second, "the subscription", func() bool { return sub.Subscribers(run) > 0 })
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		sent := time.Now()
		if err := pub.Publish(ctx, frame(run, int64(i+1))); err != nil {
			b.Fatal(err)
		}
		select {
		case at := <-got:
			lat = append(lat, at.Sub(sent))
		case <-time.After(10 * time.Second):
			b.Fatalf("frame %d never arrived", i+1)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
