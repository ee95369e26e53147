package bench_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/providers/replay"
	"github.com/breadai/bread/server"
	"github.com/breadai/bread/stores/sqlite"
)

// clients is how many requests are in flight at once in the short-run
// benchmarks, as wrk -c16 in the issue that asked for this harness.
const clients = 16

// longDeltas is the length of the long run, in text deltas.
const longDeltas = 10000

// runBody is the body every client posts.
const runBody = `{"input":"hi"}`

// BenchmarkShortRun measures short runs (a replay model answering one text
// delta: three NDJSON frames) with 16 concurrent clients, through the real
// server on the memory store, on a SQLite file and, when
// BREAD_TEST_POSTGRES_URL names a server, on PostgreSQL, and when
// BREAD_TEST_MYSQL_URL does, on MySQL, beside a plain net/http
// handler writing the same bytes with a flush per line. Both servers are
// driven in the same benchmark iteration, alternating halves, so the ratio
// compares them under the same load on the machine.
func BenchmarkShortRun(b *testing.B) {
	for _, bc := range []struct {
		name  string
		store func(b *testing.B) core.BreadStore
	}{
		{"memory", func(*testing.B) core.BreadStore { return memory.New() }},
		{"sqlite", sqliteStore},
		{"postgres", postgresStore},
		{"mysql", mysqlStore},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bread := startBread(b, bc.store(b), 1)
			plain := startPlain(b, bread.pieces)
			var dPlain, dBread time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			half := (b.N + 1) / 2
			for left := b.N; left > 0; {
				n := min(half, left)
				dPlain += drive(b, plain, n, clients)
				dBread += drive(b, bread.target, n, clients)
				left -= n
			}
			b.StopTimer()
			plainRate := float64(b.N) / dPlain.Seconds()
			breadRate := float64(b.N) / dBread.Seconds()
			b.ReportMetric(plainRate, "plain-req/s")
			b.ReportMetric(breadRate, "bread-runs/s")
			b.ReportMetric(breadRate/plainRate, "ratio")
		})
	}
}

// BenchmarkLongRun measures one run of 10,000 text deltas at a time, on the
// memory store, beside the plain handler replaying its bytes one flushed
// line at a time. ratio is bread's time per run over the plain handler's:
// 1 would be no cost above writing the bytes.
func BenchmarkLongRun(b *testing.B) {
	bread := startBread(b, memory.New(), longDeltas)
	plain := startPlain(b, bread.pieces)
	var dPlain, dBread time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		dPlain += drive(b, plain, 1, 1)
		dBread += drive(b, bread.target, 1, 1)
	}
	b.StopTimer()
	b.ReportMetric(dPlain.Seconds()/float64(b.N), "plain-s/run")
	b.ReportMetric(dBread.Seconds()/float64(b.N), "bread-s/run")
	b.ReportMetric(dBread.Seconds()/dPlain.Seconds(), "ratio")
}

// target is one server under test and the client that drives it.
type target struct {
	url    string
	client *http.Client
	lines  int // NDJSON lines of one answer
}

// breadServer is the real server and the bytes of one of its answers.
type breadServer struct {
	target
	pieces [][]byte
}

func sqliteStore(b *testing.B) core.BreadStore {
	s, err := sqlite.New(sqlite.Options{Path: filepath.Join(b.TempDir(), "bread.db")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// startBread serves, on loopback, an engine over store whose one agent
// replays a transcript of deltas text deltas, and records one answer.
func startBread(b *testing.B, store core.BreadStore, deltas int) breadServer {
	b.Helper()
	dir := b.TempDir()
	var t strings.Builder
	for i := range deltas {
		fmt.Fprintf(&t, `{"call":0,"type":"text-delta","delta":"tok%d "}`+"\n", i)
	}
	t.WriteString(`{"call":0,"type":"finish","finishReason":"stop","usage":{"inputTokens":1,"outputTokens":1}}` + "\n")
	if err := os.WriteFile(filepath.Join(dir, "t.jsonl"), []byte(t.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	inst, err := engine.New(engine.Config{
		Store:     store,
		Providers: replay.Registry(dir, replay.Options{NoDelay: true}),
		Agents:    []*core.Agent{{ID: "a", Model: core.ModelRef{Provider: "replay", Model: "t.jsonl"}}},
		Logger:    quiet,
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := inst.Start(ctx); err != nil {
		b.Fatal(err)
	}
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
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			b.Errorf("Serve: %v", err)
		}
		_ = inst.Stop(context.Background())
	})
	tg := target{url: "http://" + ln.Addr().String() + "/agents/a/run", client: newClient(b)}
	wire := post(b, tg)
	pieces := bytes.SplitAfter(wire, []byte("\n"))
	pieces = pieces[:len(pieces)-1]
	if want := deltas + 2; len(pieces) != want {
		b.Fatalf("one run answered %d lines, want %d:\n%s", len(pieces), want, wire)
	}
	tg.lines = len(pieces)
	return breadServer{target: tg, pieces: pieces}
}

// startPlain serves pieces with plain net/http on loopback: the body read,
// then each piece written and flushed, as the real server flushes each
// NDJSON line.
func startPlain(b *testing.B, pieces [][]byte) target {
	b.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-ndjson")
		rc := http.NewResponseController(w)
		for _, p := range pieces {
			if _, err := w.Write(p); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() { _ = hs.Serve(ln); close(done) }()
	b.Cleanup(func() { _ = hs.Close(); <-done })
	tg := target{url: "http://" + ln.Addr().String() + "/agents/a/run", client: newClient(b), lines: len(pieces)}
	post(b, tg)
	return tg
}

func newClient(b *testing.B) *http.Client {
	tr := &http.Transport{MaxIdleConns: 4 * clients, MaxIdleConnsPerHost: 4 * clients, DisableCompression: true}
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// post makes one run and returns its answer, failing b unless it is a
// complete stream.
func post(b *testing.B, tg target) []byte {
	b.Helper()
	body, err := do(tg)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// do posts one run and checks the answer ends the run.
func do(tg target) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, tg.url, strings.NewReader(runBody))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := tg.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d: %s", res.StatusCode, body)
	}
	if tg.lines > 0 && bytes.Count(body, []byte("\n")) != tg.lines {
		return nil, fmt.Errorf("answer has %d lines, want %d", bytes.Count(body, []byte("\n")), tg.lines)
	}
	last := bytes.TrimSuffix(body, []byte("\n"))
	if !bytes.Contains(last[bytes.LastIndexByte(last, '\n')+1:], []byte(`"agent:run:end"`)) {
		return nil, fmt.Errorf("answer does not end with agent:run:end: %s", body)
	}
	return body, nil
}

// drive makes n runs against tg from c concurrent clients and returns the
// wall time they took.
func drive(b *testing.B, tg target, n, c int) time.Duration {
	start := time.Now()
	err := driveErr(tg, n, c)
	d := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// driveErr makes n runs against tg from c concurrent clients and returns
// the first error.
func driveErr(tg target, n, c int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	for range min(c, n) {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if _, err := do(tg); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		return *err
	}
	return nil
}
