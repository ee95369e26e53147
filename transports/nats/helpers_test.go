package nats_test

import (
	"bytes"
	"context"
	"crypto/rand"
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

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/breadai/bread/core"
	bnats "github.com/breadai/bread/transports/nats"
)

// requireOrSkip skips with reason, or fails when BREAD_TEST_REQUIRE=1.
func requireOrSkip(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("BREAD_TEST_REQUIRE") == "1" {
		t.Fatalf("BREAD_TEST_REQUIRE=1: %s", reason)
	}
	t.Skip(reason)
}

// sharedNATSURL is the machine's NATS, shared with other packages' tests.
func sharedNATSURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("BREAD_TEST_NATS_URL")
	if u == "" {
		requireOrSkip(t, "BREAD_TEST_NATS_URL is not set (e.g. nats://127.0.0.1:4222, a server with JetStream); skipping tests against a real NATS")
	}
	return u
}

// names is a stream name and subject prefix no other test uses; the
// stream is deleted when the test ends.
type names struct{ stream, prefix, bucket string }

func testNames(t testing.TB, url string) names {
	t.Helper()
	id := strings.ToLower(rand.Text()[:12])
	n := names{stream: "BREAD_TEST_" + id, prefix: "bread.test." + id, bucket: "bread_test_" + id}
	t.Cleanup(func() { deleteStreams(t, url, n) })
	return n
}

func deleteStreams(t testing.TB, url string, n names) {
	nc, err := nats.Connect(url)
	if err != nil {
		t.Logf("cleanup: %v", err)
		return
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, s := range []string{n.stream, "KV_" + n.bucket + "_leases"} {
		if err := js.DeleteStream(ctx, s); err != nil && !strings.Contains(err.Error(), "not found") {
			t.Logf("cleanup: delete stream %s: %v", s, err)
		}
	}
}

// newTransport returns a started transport on url with private names,
// closed when the test ends.
func newTransport(t testing.TB, url string, opts bnats.Options) *bnats.Transport {
	t.Helper()
	if opts.URL == "" && opts.Conn == nil {
		opts.URL = url
	}
	if opts.Stream == "" {
		n := testNames(t, url)
		opts.Stream, opts.SubjectPrefix = n.stream, n.prefix
	}
	tr, err := bnats.New(opts)
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

func runID(testing.TB) string { return "run-" + rand.Text()[:10] }

func base(run string, seq int64) core.CrumbBase {
	return core.CrumbBase{AgentID: "agent", RunID: run, SessionID: "session", Timestamp: 1700000000000, Seq: seq}
}

func frame(run string, seq int64) core.Frame {
	return core.Frame{RunID: run, Seq: seq, Crumb: &core.ToolInputEnd{CrumbBase: base(run, seq), ToolCallID: "call"}}
}

func publishRange(t testing.TB, tr *bnats.Transport, run string, first, last int64) {
	t.Helper()
	for i := first; i <= last; i++ {
		if err := tr.Publish(context.Background(), frame(run, i)); err != nil {
			t.Fatalf("Publish %d: %v", i, err)
		}
	}
}

func flush(t testing.TB, tr *bnats.Transport) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
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

// last returns the type of the last frame received, or "".
func (c *collector) last() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.frames) == 0 {
		return ""
	}
	return c.frames[len(c.frames)-1].Crumb.CrumbType()
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

// waitFor polls cond, which is how these tests wait on state another
// process (NATS) owns.
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

// privateNATS is a nats-server with JetStream this test starts, stops and
// restarts (keeping its store directory, as a real restart does), so
// outages never touch the NATS other packages share.
type privateNATS struct {
	t    testing.TB
	bin  string
	port int
	dir  string
	cmd  *exec.Cmd
	exit chan struct{}
	out  *logBuffer
}

func startPrivateNATS(t testing.TB) *privateNATS {
	t.Helper()
	bin := os.Getenv("BREAD_TEST_NATS_SERVER")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("nats-server"); err != nil {
			if _, serr := os.Stat("/usr/sbin/nats-server"); serr != nil {
				requireOrSkip(t, "nats-server is not on PATH; skipping the outage tests that stop and restart a private NATS")
			}
			bin = "/usr/sbin/nats-server"
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	r := &privateNATS{t: t, bin: bin, port: port, dir: t.TempDir(), out: &logBuffer{}}
	r.start()
	t.Cleanup(func() {
		r.stop()
		if t.Failed() {
			t.Logf("private nats-server output:\n%s", r.out.String())
		}
	})
	return r
}

func (r *privateNATS) URL() string { return "nats://127.0.0.1:" + strconv.Itoa(r.port) }

func (r *privateNATS) start() {
	r.t.Helper()
	r.cmd = exec.Command(r.bin, "-a", "127.0.0.1", "-p", strconv.Itoa(r.port), "-js", "-sd", r.dir)
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("start nats-server: %v", err)
	}
	exit := make(chan struct{})
	r.exit = exit
	go func(cmd *exec.Cmd) { _ = cmd.Wait(); close(exit) }(r.cmd)

	deadline := time.Now().Add(15 * time.Second)
	for {
		nc, err := nats.Connect(r.URL(), nats.Timeout(time.Second))
		if err == nil {
			js, _ := jetstream.New(nc)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, err = js.AccountInfo(ctx)
			cancel()
			nc.Close()
			if err == nil {
				return
			}
		}
		select {
		case <-exit:
			r.t.Fatalf("nats-server exited:\n%s", r.out.String())
		default:
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("nats-server on port %d never answered: %v\n%s", r.port, err, r.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *privateNATS) stop() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.exit
	r.cmd = nil
}

func (r *privateNATS) restart() {
	r.t.Helper()
	r.start()
}
