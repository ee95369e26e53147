package bench_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/server"
)

// idleTails is how many passive streams BenchmarkIdleTails holds open.
const idleTails = 10000

// BenchmarkIdleTails opens 10,000 passive streams (GET /runs/{id}/stream)
// on one suspended run through the real server, on the memory store and
// the in-process bus, and reports what they hold once all are open: the
// process's RSS (clients included: a raw TCP connection each, no client
// goroutine), the server goroutines per tail, and the Go heap per tail.
// Then it closes them and checks every tail's goroutines end.
// Run it with -benchtime 1x: one iteration is the whole exercise.
func BenchmarkIdleTails(b *testing.B) {
	quiet := slog.New(slog.DiscardHandler)
	model := modeltest.New(modeltest.ToolCall("human_ask", map[string]string{}))
	inst, err := engine.New(engine.Config{
		Store:     memory.New(),
		Providers: model.Registry("mock"),
		Agents: []*core.Agent{{ID: "a", Model: core.ModelRef{Provider: "mock", Model: "m"},
			HumanTools: []core.HumanToolDef{{Name: "ask", Schema: json.RawMessage(`{"type":"object"}`)}}}},
		Logger: quiet,
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := inst.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer inst.Stop(context.Background())
	srv, err := server.New(inst, server.Options{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()

	var runID string
	for c, err := range inst.Run(ctx, "a", "hi", core.RunOptions{}) {
		if err != nil {
			b.Fatal(err)
		}
		if hr, ok := c.(*core.HumanRequired); ok {
			runID = hr.RunID
		}
	}
	if runID == "" {
		b.Fatal("the run did not suspend")
	}
	for range b.N {
		runtime.GC()
		g0, heap0, rss0 := runtime.NumGoroutine(), heapInUse(), rssBytes()
		// The clients live in a child process: the file descriptors of both
		// ends would not fit one process's limit, and the server's RSS is
		// then its own.
		client := exec.Command(os.Args[0], "-test.run", "^TestTailsClient$")
		client.Env = append(os.Environ(), "BREAD_TAILS_CLIENT="+ln.Addr().String()+" "+runID)
		stdin, _ := client.StdinPipe()
		stdout, _ := client.StdoutPipe()
		client.Stderr = os.Stderr
		if err := client.Start(); err != nil {
			b.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || strings.TrimSpace(line) != "ready" {
			_ = client.Process.Kill()
			_ = client.Wait()
			b.Fatalf("the client process: %q, %v", line, err)
		}
		runtime.GC()
		g1, heap1, rss1 := runtime.NumGoroutine(), heapInUse(), rssBytes()
		b.ReportMetric(float64(rss1)/(1<<20), "server-rss-MiB")
		b.ReportMetric(float64(rss1-rss0)/(1<<20), "tails-rss-MiB")
		b.ReportMetric(float64(g1-g0)/idleTails, "goroutines/tail")
		b.ReportMetric(float64(heap1-heap0)/idleTails/1024, "heap-KiB/tail")
		_ = stdin.Close() // the client closes its connections and exits
		if err := client.Wait(); err != nil {
			b.Fatalf("the client process: %v", err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for runtime.NumGoroutine() > g0+10 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if g := runtime.NumGoroutine(); g > g0+10 {
			b.Fatalf("%d goroutines left after closing the tails (%d before)", g, g0)
		}
	}
}

// TestTailsClient is BenchmarkIdleTails's client process (it does nothing
// in a plain test run): it opens the tails, says "ready", and holds them
// until its stdin closes.
func TestTailsClient(t *testing.T) {
	env := os.Getenv("BREAD_TAILS_CLIENT")
	if env == "" {
		return
	}
	addr, runID, _ := strings.Cut(env, " ")
	request := []byte("GET /runs/" + runID + "/stream HTTP/1.1\r\nHost: " + addr + "\r\n\r\n")
	conns := make([]net.Conn, 0, idleTails)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	buf := make([]byte, 8<<10)
	for range idleTails {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial after %d tails: %v", len(conns), err)
		}
		conns = append(conns, c)
		if _, err := c.Write(request); err != nil {
			t.Fatal(err)
		}
		// Read until the catch-up has replayed the suspension.
		var seen []byte
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		for !bytes.Contains(seen, []byte("human:required")) {
			n, err := c.Read(buf)
			if err != nil {
				t.Fatalf("tail %d: %v after %q", len(conns), err, seen)
			}
			seen = append(seen, buf[:n]...)
		}
	}
	os.Stdout.WriteString("ready\n")
	_, _ = io.Copy(io.Discard, os.Stdin)
}

func heapInUse() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse)
}

// rssBytes reads the process's resident set from /proc (Linux).
func rssBytes() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
