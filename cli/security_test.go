package cli_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// post sends body to base+path with the given header pairs and returns the
// status and body.
func post(t *testing.T, base, path, body string, hdr ...string) (int, string) {
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
	if code, body := post(t, p.base, "/agents/echo/run", `{"input":"hi"}`, browser...); code != http.StatusForbidden || body != `{"error":"Forbidden"}` {
		t.Fatalf("a cross-site simple POST = %d %q, want 403 {\"error\":\"Forbidden\"}", code, body)
	}
	if got := sessionList(t, p.base); got != "[]" {
		t.Fatalf("a refused request left sessions: %s", got)
	}
	if code, body := post(t, p.base, "/agents/echo/run", `{"input":"hi"}`, "Content-Type", "text/plain"); code != http.StatusOK || !strings.Contains(body, "agent:run:end") {
		t.Fatalf("curl's POST = %d %s", code, body)
	}

	open := startServe(t, helloWorld(t, "server: {allowCrossOrigin: true}"), nil)
	if code, body := post(t, open.base, "/agents/echo/run", `{"input":"hi"}`, browser...); code != http.StatusOK || !strings.Contains(body, "agent:run:end") {
		t.Fatalf("with allowCrossOrigin, a cross-site POST = %d %s", code, body)
	}
}
