package server_test

import (
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server"
)

// rssKiB is this process's resident set size.
func rssKiB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// descriptorBudget is how many dead connections this test process can
// hold: each costs two descriptors here (the client's and the server's),
// and 256 stay for everything else. Go raises the soft limit to the hard
// one at start; raise it again in case something lowered it.
func descriptorBudget(t *testing.T, want int) int {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	n := min(want, (int(min(lim.Cur, 1<<20))-256)/2)
	if n < 100 {
		t.Skipf("an open file limit of %d leaves room for %d connections", lim.Cur, n)
	}
	return n
}

// deadBodies opens n connections to addr, each sending a request that
// declares a body of 100 bytes and never sends it.
func deadBodies(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	req := "POST /agents/writer/run HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
	conns := make([]net.Conn, n)
	for i := range conns {
		conns[i] = dial(t, addr, req)
	}
	return conns
}

// healthz asks /healthz on a connection of its own. The minute only
// bounds the test.
func healthz(t *testing.T, addr string) int {
	t.Helper()
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := c.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("/healthz: %v", err)
	}
	res.Body.Close()
	return res.StatusCode
}

// waitGoroutines waits until at most n goroutines run; the minute only
// bounds the test.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); runtime.NumGoroutine() > n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines still run, want at most %d", runtime.NumGoroutine(), n)
		}
	}
}

// TestDeadBodiesAreCutAndTheServerKeepsAnswering is issue 29's flood:
// thousands of connections that declare a body and never send it. While
// they are held /healthz answers; each is then cut with 408
// REQUEST_TIMEOUT and closed, and the goroutines they held are gone.
func TestDeadBodiesAreCutAndTheServerKeepsAnswering(t *testing.T) {
	n := descriptorBudget(t, 3000)
	f := newFixture(t, fakeConfig{})
	addr := listen(t, f, server.Options{BodyReadTimeout: 3 * time.Second, MaxConnections: n + 100})
	runtime.GC()
	goroutines, rss := runtime.NumGoroutine(), rssKiB(t)

	conns := deadBodies(t, addr, n)
	if code := healthz(t, addr); code != http.StatusOK {
		t.Fatalf("/healthz during the flood = %d", code)
	}
	held, heldRSS := runtime.NumGoroutine(), rssKiB(t)
	t.Logf("%d dead bodies: %d → %d goroutines, RSS %d → %d KiB (%.1f KiB a connection, both ends)",
		n, goroutines, held, rss, heldRSS, float64(heldRSS-rss)/float64(n))
	// Both ends of a connection live in this process (about 20 KiB for
	// the two, measured); the issue measured about 30 KiB a connection for
	// the server alone, and never got it back.
	if grown := heldRSS - rss; !raceEnabled && grown > n*64 {
		t.Errorf("RSS grew %d KiB for %d connections", grown, n)
	}
	for i, c := range conns {
		res := readCut(t, c)
		if res.StatusCode != http.StatusRequestTimeout || errorCodeOf(t, res) != core.CodeRequestTimeout {
			t.Fatalf("connection %d: %d, want 408 REQUEST_TIMEOUT", i, res.StatusCode)
		}
		c.Close()
	}
	waitGoroutines(t, goroutines+10)
	if code := healthz(t, addr); code != http.StatusOK {
		t.Fatalf("/healthz after the flood = %d", code)
	}
}

// TestTheConnectionCapBoundsWhatAFloodHolds: past MaxConnections, new
// connections wait in the listen backlog instead of each taking a
// goroutine and a descriptor. The server never holds more than the cap;
// the waiting ones are served as the dead ones are cut, /healthz among
// them.
func TestTheConnectionCapBoundsWhatAFloodHolds(t *testing.T) {
	const limit, flood = 20, 120
	f := newFixture(t, fakeConfig{})
	addr := listen(t, f, server.Options{BodyReadTimeout: 300 * time.Millisecond, MaxConnections: limit})
	runtime.GC()
	base := runtime.NumGoroutine()
	// Each served connection costs the server one goroutine; a few more
	// come and go (the accept loop, timers, this test's reads).
	bound := base + limit + 10
	conns := deadBodies(t, addr, flood)
	most := 0
	for i, c := range conns {
		most = max(most, runtime.NumGoroutine())
		if most > bound {
			t.Fatalf("%d goroutines with %d dead connections and a cap of %d (base %d)", most, flood-i, limit, base)
		}
		res := readCut(t, c)
		if res.StatusCode != http.StatusRequestTimeout {
			t.Fatalf("connection %d: %d, want 408", i, res.StatusCode)
		}
		c.Close()
	}
	if code := healthz(t, addr); code != http.StatusOK {
		t.Fatalf("/healthz = %d", code)
	}
	t.Logf("at most %d goroutines (base %d, cap %d) for %d dead connections", most, base, limit, flood)
}
