package cli_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// rssKiB reads a process's resident set size from /proc.
func rssKiB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatalf("VmRSS %q: %v", rest, err)
			}
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// TestForeignBodiesCostNothing is the attack, over the built
// binary: 400 requests with Host: evil.com each start a 1 MiB chunked body
// and never finish it. The server used to buffer them (333 → 788 MiB);
// now the Host guard answers 403 before reading a body, so the resident
// size stays within 50 MiB of where it started.
func TestForeignBodiesCostNothing(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../examples/hello-world")); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, dir, nil)
	addr := strings.TrimPrefix(p.base, "http://")
	before := rssKiB(t, p.cmd.Process.Pid)

	const requests, parallel = 400, 16
	body := bytes.Repeat([]byte("x"), 1<<20)
	head := "POST /agents/echo/run HTTP/1.1\r\nHost: evil.com\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
		strconv.FormatInt(int64(len(body)+1), 16) + "\r\n" // one byte short: never finished
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallel)
	statuses := make(chan int, requests)
	for range requests {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				statuses <- -1
				return
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
			// The server may close before the body is written: a write
			// error is the expected outcome, not a failure.
			_, _ = conn.Write([]byte(head))
			_, _ = conn.Write(body)
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				statuses <- 0
				return
			}
			res.Body.Close()
			statuses <- res.StatusCode
		}()
	}
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	if counts[http.StatusForbidden] == 0 || counts[-1] > 0 {
		t.Fatalf("answers %v: want 403s (0 = connection closed before the answer was read)", counts)
	}
	after := rssKiB(t, p.cmd.Process.Pid)
	t.Logf("RSS %d KiB → %d KiB after %d foreign 1 MiB bodies; answers %v", before, after, requests, counts)
	if after-before > 50*1024 {
		t.Fatalf("RSS grew by %d KiB, want at most 50 MiB", after-before)
	}
}
