//go:build unix

package bench_test

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/breadai/bread/core/memory"
)

// BenchmarkServerCPU measures what a short run costs the server alone: the
// real server (memory store) and the plain net/http handler run in this
// process, and their clients in a child process (this test binary again,
// TestLoadClient), so the process CPU time this process spends while a
// child drives one server (getrusage: user + system) is that server's,
// garbage collection included, and none of it the client's. The two
// servers alternate in quarters of b.N. server-µs/run and plain-µs/req are
// CPU per request; ratio is plain's over bread's, the throughput ratio a
// cheap client (wrk) would see on a machine the server saturates.
// server-gc-µs/run and plain-gc-µs/req are the part of each that the
// runtime counts as the garbage collector's (runtime/metrics, an estimate:
// marking on every P, idle ones included, assists and pauses).
func BenchmarkServerCPU(b *testing.B) {
	bread := startBread(b, memory.New(), 1)
	plain := startPlain(b, bread.pieces)
	var cpuPlain, cpuBread, gcPlain, gcBread float64
	b.ResetTimer()
	quarter := (b.N + 3) / 4
	for left := b.N; left > 0; {
		n := min(quarter, left)
		cpu, gc := serverCPU(b, plain, n)
		cpuPlain, gcPlain = cpuPlain+cpu, gcPlain+gc
		cpu, gc = serverCPU(b, bread.target, n)
		cpuBread, gcBread = cpuBread+cpu, gcBread+gc
		left -= n
	}
	b.StopTimer()
	perRequest := func(s float64) float64 { return s * 1e6 / float64(b.N) }
	b.ReportMetric(perRequest(cpuPlain), "plain-µs/req")
	b.ReportMetric(perRequest(cpuBread), "server-µs/run")
	b.ReportMetric(cpuPlain/cpuBread, "ratio")
	b.ReportMetric(perRequest(gcPlain), "plain-gc-µs/req")
	b.ReportMetric(perRequest(gcBread), "server-gc-µs/run")
}

// serverCPU has a child process make n requests to tg from 16 clients and
// returns the CPU time this process spent meanwhile, and the part of it
// the runtime counts as the collector's, in seconds.
func serverCPU(b *testing.B, tg target, n int) (cpu, gc float64) {
	b.Helper()
	client := exec.Command(os.Args[0], "-test.run", "^TestLoadClient$")
	client.Env = append(os.Environ(), fmt.Sprintf("BREAD_LOAD_CLIENT=%s %d %d %d", tg.url, n, clients, tg.lines))
	stdin, err := client.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := client.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	client.Stderr = os.Stderr
	if err := client.Start(); err != nil {
		b.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	// The child says ready once it is up, and starts on the newline it
	// is sent, so its start-up is not counted.
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		_ = client.Process.Kill()
		_ = client.Wait()
		b.Fatalf("the load client: %q, %v", line, err)
	}
	before, gcBefore := processCPU(b), gcCPU()
	if _, err := stdin.Write([]byte("go\n")); err != nil {
		b.Fatal(err)
	}
	line, rerr := out.ReadString('\n')
	spent, gcSpent := processCPU(b)-before, gcCPU()-gcBefore
	_ = stdin.Close()
	if err := client.Wait(); err != nil || rerr != nil || line != "done\n" {
		b.Fatalf("the load client: %q, %v, %v", line, rerr, err)
	}
	return spent.Seconds(), gcSpent
}

// gcCPU is the CPU time, in seconds, the runtime estimates its collector
// has used in this process.
func gcCPU() float64 {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64 {
		return 0
	}
	return s[0].Value.Float64()
}

// processCPU is the user and system CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestLoadClient is BenchmarkServerCPU's client process (it does nothing
// in a plain test run): it says ready, waits for a line on stdin, makes
// its runs, checking every answer as the other benchmarks do, and says
// done.
func TestLoadClient(t *testing.T) {
	env := os.Getenv("BREAD_LOAD_CLIENT")
	if env == "" {
		return
	}
	f := strings.Fields(env)
	if len(f) != 4 {
		t.Fatalf("BREAD_LOAD_CLIENT=%q: want url, runs, clients, lines", env)
	}
	n, err1 := strconv.Atoi(f[1])
	c, err2 := strconv.Atoi(f[2])
	lines, err3 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatalf("BREAD_LOAD_CLIENT=%q: %v %v %v", env, err1, err2, err3)
	}
	tr := &http.Transport{MaxIdleConns: 4 * c, MaxIdleConnsPerHost: 4 * c, DisableCompression: true}
	defer tr.CloseIdleConnections()
	tg := target{url: f[0], client: &http.Client{Transport: tr}, lines: lines}
	// Warm the connections up before the count starts.
	for range c {
		if _, err := do(tg); err != nil {
			t.Fatal(err)
		}
	}
	os.Stdout.WriteString("ready\n")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if err := driveErr(tg, n, c); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("done\n")
}
