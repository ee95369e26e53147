package redis_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	bredis "github.com/breadai/bread/transports/redis"
)

// The cross-process benchmarks re-run this test binary as the publishing
// process: TestHelperProcess, configured through these variables.
const (
	helperEnv       = "BREAD_REDIS_BENCH_HELPER"
	helperURLEnv    = "BREAD_REDIS_BENCH_URL"
	helperPrefixEnv = "BREAD_REDIS_BENCH_PREFIX"
	helperRunEnv    = "BREAD_REDIS_BENCH_RUN"
	helperFramesEnv = "BREAD_REDIS_BENCH_FRAMES"
	helperPaceEnv   = "BREAD_REDIS_BENCH_PACE"
	benchMaxLen     = 200000
)

// TestHelperProcess is the publisher of the cross-process benchmarks, not a
// test. It prints "ready", waits for a line on stdin, then publishes frames
// whose text:delta is the wall-clock time of the Publish call.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("the publishing process of the cross-process benchmarks")
	}
	frames, _ := strconv.Atoi(os.Getenv(helperFramesEnv))
	pace, _ := time.ParseDuration(os.Getenv(helperPaceEnv))
	run := os.Getenv(helperRunEnv)
	tr, err := bredis.New(bredis.Options{
		URL:       os.Getenv(helperURLEnv),
		KeyPrefix: os.Getenv(helperPrefixEnv),
		MaxLen:    benchMaxLen,
		QueueSize: 1 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx := context.Background()
	if err := tr.Start(ctx); err != nil {
		t.Fatal(err)
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := 1; i <= frames; i++ {
		if pace > 0 {
			if d := time.Until(start.Add(time.Duration(i-1) * pace)); d > 0 {
				time.Sleep(d)
			}
		}
		f := core.Frame{RunID: run, Seq: int64(i), Crumb: &core.TextDelta{
			CrumbBase: core.CrumbBase{AgentID: "bench", RunID: run, SessionID: "s", Timestamp: time.Now().UnixMilli(), Seq: int64(i)},
			Delta:     strconv.FormatInt(time.Now().UnixNano(), 10),
		}}
		if err := tr.Publish(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	flushCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := tr.Flush(flushCtx); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkCrossProcessLatency measures publish-to-deliver latency between
// two processes through Redis, at a steady 2000 frames/s (one frame per
// 500µs): p50 and p99 in microseconds. ns/op is the pacing.
func BenchmarkCrossProcessLatency(b *testing.B) { benchCrossProcess(b, 500*time.Microsecond) }

// BenchmarkCrossProcessThroughput publishes as fast as one process can and
// reports the frames per second another process receives, with the
// latencies of that saturated stream.
func BenchmarkCrossProcessThroughput(b *testing.B) { benchCrossProcess(b, 0) }

func benchCrossProcess(b *testing.B, pace time.Duration) {
	url := sharedRedisURL(b)
	prefix := testPrefix(b, url)
	tr := newTransport(b, url, bredis.Options{KeyPrefix: prefix, MaxLen: benchMaxLen})
	run := runID(b)
	n := b.N

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	latencies := make([]time.Duration, 0, n)
	var last time.Time
	received := make(chan error, 1)
	go func() {
		for f, err := range tr.Subscribe(ctx, run, 0) {
			if err != nil {
				received <- err
				return
			}
			now := time.Now()
			sent, err := strconv.ParseInt(f.Crumb.(*core.TextDelta).Delta, 10, 64)
			if err != nil {
				received <- err
				return
			}
			latencies = append(latencies, now.Sub(time.Unix(0, sent)))
			if len(latencies) == n {
				last = now
				received <- nil
				return
			}
		}
		received <- ctx.Err()
	}()
	waitFor(b, 10*time.Second, "the subscription to tail", func() bool { return tr.Subscribers(run) == 1 })

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(),
		helperEnv+"=1", helperURLEnv+"="+url, helperPrefixEnv+"="+prefix, helperRunEnv+"="+run,
		helperFramesEnv+"="+strconv.Itoa(n), helperPaceEnv+"="+pace.String())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "ready" {
		b.Fatalf("the publishing process did not start: %q %v", lines.Text(), lines.Err())
	}
	go func() {
		for lines.Scan() { // drain the child's test output
		}
	}()

	b.ResetTimer()
	start := time.Now()
	if _, err := stdin.Write([]byte("go\n")); err != nil {
		b.Fatal(err)
	}
	select {
	case err := <-received:
		if err != nil {
			b.Fatalf("after %d of %d frames: %v", len(latencies), n, err)
		}
	case <-time.After(5 * time.Minute):
		b.Fatalf("received %d of %d frames", len(latencies), n)
	}
	b.StopTimer()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("the publishing process failed: %v", err)
	}

	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[min(len(latencies)-1, int(p*float64(len(latencies))))].Microseconds())
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(n)/last.Sub(start).Seconds(), "frames/s")
}

// BenchmarkPublish is the cost of Publish to the run (it only queues) and,
// as frames/s, the write throughput to Redis of one transport.
func BenchmarkPublish(b *testing.B) {
	url := sharedRedisURL(b)
	tr := newTransport(b, url, bredis.Options{MaxLen: 1000, QueueSize: 1 << 20})
	run := runID(b)
	ctx := context.Background()
	f := frame(run, 1)
	start := time.Now()
	for b.Loop() {
		if err := tr.Publish(ctx, f); err != nil {
			b.Fatal(err)
		}
	}
	flushCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := tr.Flush(flushCtx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "frames/s")
	if st := tr.Stats(); st.Dropped > 0 {
		b.Fatalf("dropped %d frames", st.Dropped)
	}
}
