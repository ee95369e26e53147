package examplestest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// evilPage serves, on an origin of its own (127.0.0.1, another site than
// localhost), a page that makes its visitor's browser post a run to
// target the way any web page can: a "simple" text/plain POST in no-cors
// mode, which needs no preflight. It shows #done once the fetch settled.
func evilPage(t *testing.T, target string) string {
	t.Helper()
	page := fmt.Sprintf(`<!doctype html><title>evil</title><body><script>
fetch(%q, {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: '{"input":"hi"}'})
  .catch(() => {})
  .finally(() => { const p = document.createElement("p"); p.id = "done"; p.textContent = "done"; document.body.append(p) })
</script></body>`, target)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, page)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// sessions is GET /sessions as text.
func sessions(t *testing.T, base string) string {
	t.Helper()
	res, err := http.Get(base + "/sessions")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return strings.TrimSpace(string(b))
}

// TestCrossSitePageInBrowser is issue 29's attack in a real browser: a
// page on another site, open in headless Chromium, posts a run to `bread
// start` of hello-world (no auth, loopback). Chromium sends the request
// with its own Sec-Fetch-Site and Origin headers; the server's cross-origin
// guard refuses it and no session is created. The same page against a
// server with `server.allowCrossOrigin: true` does start a run, so the
// browser did send the request both times.
func TestCrossSitePageInBrowser(t *testing.T) {
	chrome := needChromium(t)
	t.Parallel()
	guarded := startServer(t, copyExample(t, "hello-world"), nil)
	openDir := copyExample(t, "hello-world")
	cfg := filepath.Join(openDir, "bread.yaml")
	src, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append(src, "\nserver: {allowCrossOrigin: true}\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	open := startServer(t, openDir, nil)

	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chrome),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	// The tab lives as long as the context of its first action: open it on
	// ctx, then bound the steps.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelTimeout()

	// The servers listen on 127.0.0.1; the page targets them as localhost,
	// another site than the page's 127.0.0.1.
	visit := func(base string) {
		t.Helper()
		target := strings.Replace(base, "127.0.0.1", "localhost", 1) + "/agents/echo/run"
		if err := chromedp.Do(ctx, chromedp.Navigate(evilPage(t, target)), chromedp.WaitVisible(chromedp.CSS("#done"))); err != nil {
			t.Fatal(err)
		}
	}
	visit(guarded.URL)
	if got := sessions(t, guarded.URL); got != "[]" {
		t.Fatalf("a cross-site page started a run on a guarded server: sessions %s", got)
	}

	visit(open.URL)
	// The fetch settles when the answer's headers arrive; the run may
	// still be storing its session.
	for sessions(t, open.URL) == "[]" {
		select {
		case <-ctx.Done():
			t.Fatal("with allowCrossOrigin, the page's request started no run: did the browser send it?")
		case <-time.After(50 * time.Millisecond):
		}
	}
}
