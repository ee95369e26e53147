package cli_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helloWorld copies examples/hello-world to a temporary directory with
// extra appended to its bread.yaml.
func helloWorld(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../examples/hello-world")); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "bread.yaml")
	src, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append(src, "\n"+extra+"\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// postAs sends body to base+path with the given header pairs and returns the
// status and body.
func postAs(t *testing.T, base, path, body string, hdr ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// sessionList is GET /sessions as text.
func sessionList(t *testing.T, base string) string {
	t.Helper()
	res, err := http.Get(base + "/sessions")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return strings.TrimSpace(string(b))
}

// TestCrossSiteSimpleRequestOverTheBinary is issue 29's attack on `bread
// start` with no auth on loopback: a page on https://evil.example makes
// its visitor's browser POST a text/plain run (no preflight). It is 403
// with the seed's body and no session is created; curl, which sends no
// browser headers, still runs the agent; `server.allowCrossOrigin: true`
// turns the guard off.
func TestCrossSiteSimpleRequestOverTheBinary(t *testing.T) {
	browser := []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors", "Content-Type", "text/plain;charset=UTF-8"}
	p := startServe(t, helloWorld(t, ""), nil)
	if code, body := postAs(t, p.base, "/agents/echo/run", `{"input":"hi"}`, browser...); code != http.StatusForbidden || body != `{"error":"Forbidden"}` {
		t.Fatalf("a cross-site simple POST = %d %q, want 403 {\"error\":\"Forbidden\"}", code, body)
	}
	if got := sessionList(t, p.base); got != "[]" {
		t.Fatalf("a refused request left sessions: %s", got)
	}
	if code, body := postAs(t, p.base, "/agents/echo/run", `{"input":"hi"}`, "Content-Type", "text/plain"); code != http.StatusOK || !strings.Contains(body, "agent:run:end") {
		t.Fatalf("curl's POST = %d %s", code, body)
	}

	open := startServe(t, helloWorld(t, "server: {allowCrossOrigin: true}"), nil)
	if code, body := postAs(t, open.base, "/agents/echo/run", `{"input":"hi"}`, browser...); code != http.StatusOK || !strings.Contains(body, "agent:run:end") {
		t.Fatalf("with allowCrossOrigin, a cross-site POST = %d %s", code, body)
	}
}

// TestDeadBodiesOverTheBinary is issue 29's descriptor exhaustion, on
// `bread start`: 300 connections declare a body and never send it, against
// a cap of 50 connections and a 1 s body deadline. /healthz answers; every
// dead body is cut with 408 REQUEST_TIMEOUT and its connection closed; the
// server's resident size stays within 64 MiB of where it started.
func TestDeadBodiesOverTheBinary(t *testing.T) {
	p := startServe(t, helloWorld(t, "server: {timeouts: {bodyRead: 1s}, maxConnections: 50}"), nil)
	addr := strings.TrimPrefix(p.base, "http://")
	before := rssKiB(t, p.cmd.Process.Pid)
	req := "POST /agents/echo/run HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
	conns := make([]net.Conn, 0, 300)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range cap(conns) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
	}
	during := rssKiB(t, p.cmd.Process.Pid)
	health := make(chan int, 1)
	go func() {
		c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}
		res, err := c.Get(p.base + "/healthz")
		if err != nil {
			health <- 0
			return
		}
		res.Body.Close()
		health <- res.StatusCode
	}()
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(time.Minute)) // bounds the test; the server acts long before
		br := bufio.NewReader(c)
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), `"REQUEST_TIMEOUT"`) {
			t.Fatalf("connection %d: %d %s, want 408 REQUEST_TIMEOUT", i, res.StatusCode, body)
		}
		if _, err := br.ReadByte(); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("connection %d after its 408: %v, want it closed", i, err)
		}
	}
	if code := <-health; code != http.StatusOK {
		t.Fatalf("/healthz during the flood = %d", code)
	}
	after := rssKiB(t, p.cmd.Process.Pid)
	t.Logf("RSS %d KiB before, %d with 300 dead bodies held against a cap of 50, %d after", before, during, after)
	if after-before > 64<<10 || during-before > 64<<10 {
		t.Fatalf("RSS grew from %d to %d (%d after)", before, during, after)
	}
}
