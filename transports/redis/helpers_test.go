package redis_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	bredis "github.com/breadai/bread/transports/redis"
	goredis "github.com/redis/go-redis/v9"
)

// requireOrSkip skips with reason, or fails when BREAD_TEST_REQUIRE=1.
func requireOrSkip(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("BREAD_TEST_REQUIRE") == "1" {
		t.Fatalf("BREAD_TEST_REQUIRE=1: %s", reason)
	}
	t.Skip(reason)
}

// sharedRedisURL is the machine's Redis, shared with other packages' tests.
func sharedRedisURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("BREAD_TEST_REDIS_URL")
	if u == "" {
		requireOrSkip(t, "BREAD_TEST_REDIS_URL is not set (e.g. redis://127.0.0.1:6379/0); skipping tests against a real Redis")
	}
	return u
}

// testPrefix is a key prefix no other test uses. Keys under it are deleted
// when the test ends.
func testPrefix(t testing.TB, url string) string {
	t.Helper()
	prefix := "bread:test:" + rand.Text()[:12] + ":"
	t.Cleanup(func() { deleteKeys(t, url, prefix) })
	return prefix
}

func deleteKeys(t testing.TB, url, prefix string) {
	c := rawClient(t, url)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	iter := c.Scan(ctx, 0, prefix+"*", 500).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Logf("cleanup: scan %s*: %v", prefix, err)
		return
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := c.Unlink(ctx, keys[:n]...).Err(); err != nil {
			t.Logf("cleanup: unlink: %v", err)
			return
		}
		keys = keys[n:]
	}
}

func rawClient(t testing.TB, url string) *goredis.Client {
	t.Helper()
	o, err := goredis.ParseURL(url)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return goredis.NewClient(o)
}

// newTransport returns a started transport on url with a private prefix,
// closed when the test ends.
func newTransport(t testing.TB, url string, opts bredis.Options) *bredis.Transport {
	t.Helper()
	if opts.URL == "" && opts.Client == nil {
		opts.URL = url
	}
	if opts.KeyPrefix == "" {
		opts.KeyPrefix = testPrefix(t, url)
	}
	tr, err := bredis.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := tr.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return tr
}

func runID(t testing.TB) string { return "run-" + rand.Text()[:10] }

func base(run string, seq int64) core.CrumbBase {
	return core.CrumbBase{AgentID: "agent", RunID: run, SessionID: "session", Timestamp: 1700000000000, Seq: seq}
}

func frame(run string, seq int64) core.Frame {
	return core.Frame{RunID: run, Seq: seq, Crumb: &core.ToolInputEnd{CrumbBase: base(run, seq), ToolCallID: "call"}}
}

func endFrame(run string, seq int64) core.Frame {
	return core.Frame{RunID: run, Seq: seq, Crumb: &core.AgentRunEnd{CrumbBase: base(run, seq), DurationMs: 1}}
}

func publishRange(t testing.TB, tr *bredis.Transport, run string, first, last int64) {
	t.Helper()
	for i := first; i <= last; i++ {
		if err := tr.Publish(context.Background(), frame(run, i)); err != nil {
			t.Fatalf("Publish %d: %v", i, err)
		}
	}
}

func flush(t testing.TB, tr *bredis.Transport) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := tr.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v (stats %+v)", err, tr.Stats())
	}
}

func seqRange(first, last int64) []int64 {
	var s []int64
	for i := first; i <= last; i++ {
		s = append(s, i)
	}
	return s
}

// collector ranges over a subscription in the background.
type collector struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	frames []core.Frame
	errs   []error
	change chan struct{}
}

func collect(t testing.TB, sub core.Subscriber, run string, afterSeq int64) *collector {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &collector{cancel: cancel, done: make(chan struct{}), change: make(chan struct{}, 1)}
	go func() {
		defer close(c.done)
		for f, err := range sub.Subscribe(ctx, run, afterSeq) {
			c.mu.Lock()
			if err != nil {
				c.errs = append(c.errs, err)
			} else {
				c.frames = append(c.frames, f)
			}
			c.mu.Unlock()
			select {
			case c.change <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-c.done:
		case <-time.After(15 * time.Second):
			t.Errorf("a subscription did not end after its context was cancelled")
		}
	})
	return c
}

func (c *collector) seqs() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := make([]int64, len(c.frames))
	for i, f := range c.frames {
		s[i] = f.Seq
	}
	return s
}

func (c *collector) errors() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]error(nil), c.errs...)
}

// waitSeqs waits until exactly want has arrived (failing on more).
func (c *collector) waitSeqs(t testing.TB, timeout time.Duration, want ...int64) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		got := c.seqs()
		if len(got) >= len(want) {
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("got seqs %v, want %v", got, want)
			}
			return
		}
		if errs := c.errors(); len(errs) > 0 {
			t.Fatalf("subscription failed: %v (seqs so far %v)", errs, got)
		}
		select {
		case <-c.change:
		case <-c.done:
			if got := c.seqs(); len(got) < len(want) {
				t.Fatalf("subscription ended with seqs %v, want %v", got, want)
			}
		case <-deadline:
			t.Fatalf("timed out with seqs %v, want %v", c.seqs(), want)
		}
	}
}

func (c *collector) waitDone(t testing.TB, timeout time.Duration) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(timeout):
		t.Fatalf("subscription did not end within %v", timeout)
	}
}

// waitFor polls cond, which is how these tests wait on state another
// process (Redis) owns.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// logBuffer is a concurrency-safe log sink for asserting on warnings.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newLogger(b *logBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// privateRedis is a redis-server this test starts, stops and restarts, so
// outages never touch the Redis other packages share.
type privateRedis struct {
	t    testing.TB
	bin  string
	port int
	cmd  *exec.Cmd
	exit chan struct{}
}

func startPrivateRedis(t testing.TB) *privateRedis {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		requireOrSkip(t, "redis-server is not on PATH; skipping the outage tests that stop and restart a private Redis")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	r := &privateRedis{t: t, bin: bin, port: port}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *privateRedis) URL() string { return "redis://127.0.0.1:" + strconv.Itoa(r.port) + "/0" }

func (r *privateRedis) start() {
	r.t.Helper()
	r.cmd = exec.Command(r.bin, "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "no")
	var out bytes.Buffer
	r.cmd.Stdout, r.cmd.Stderr = &out, &out
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("start redis-server: %v", err)
	}
	exit := make(chan struct{})
	r.exit = exit
	go func(cmd *exec.Cmd) { _ = cmd.Wait(); close(exit) }(r.cmd)

	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:" + strconv.Itoa(r.port), MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		select {
		case <-exit:
			r.t.Fatalf("redis-server exited: %s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("redis-server on port %d never answered: %v\n%s", r.port, err, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *privateRedis) stop() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.exit
	r.cmd = nil
}

func (r *privateRedis) restart() {
	r.t.Helper()
	r.start()
}

// isClosed reports whether err says a go-redis client was closed.
func isClosed(err error) bool {
	return errors.Is(err, goredis.ErrClosed) || (err != nil && strings.Contains(err.Error(), "closed"))
}

// newPrivateTransport is newTransport on a private Redis, which is thrown
// away with its keys, so the default prefix is fine and no cleanup runs.
func newPrivateTransport(t testing.TB, r *privateRedis, opts bredis.Options) *bredis.Transport {
	t.Helper()
	if opts.KeyPrefix == "" {
		opts.KeyPrefix = "bread:run:"
	}
	return newTransport(t, r.URL(), opts)
}
