package examplestest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestAGUIPageInBrowser opens examples/ag-ui/page, served from another
// origin that the example's bread.yaml trusts (CORS), in headless Chromium:
// the page sends a message to the shopper with its state and its frontend
// tool; the basket fills from STATE_SNAPSHOT and STATE_DELTA, the page
// shows its confirm_order tool, and the click answers it, which continues
// the run to the shopper's answer.
func TestAGUIPageInBrowser(t *testing.T) {
	chrome := needChromium(t)
	t.Parallel()
	dir := copyExample(t, "ag-ui")
	page := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(dir, "page"))))
	t.Cleanup(page.Close)
	cfg := filepath.Join(dir, "bread.yaml")
	src, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	withCORS := strings.Replace(string(src), "server:\n  port: 3004\n", "server:\n  port: 3004\n  cors: {origins: ['"+page.URL+"']}\n", 1)
	if withCORS == string(src) {
		t.Fatal("examples/ag-ui/bread.yaml has no server block to add CORS to")
	}
	if err := os.WriteFile(cfg, []byte(withCORS), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, dir, nil)
	answer := transcriptText(t, filepath.Join(dir, "transcripts/shopper.jsonl"), 2)

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
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelTimeout()

	// The page is on 127.0.0.1; bread is reached as localhost, another
	// origin, which bread.yaml's cors trusts.
	target := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/ag-ui/shop"
	err = chromedp.Do(ctx,
		chromedp.Navigate(page.URL+"/index.html?bread="+target),
		chromedp.WaitVisible(chromedp.CSS("#ask button")),
		chromedp.Click(chromedp.CSS("#ask button")),
		chromedp.WaitVisible(chromedp.CSS("#confirm")),
	)
	if err != nil {
		t.Fatal(err)
	}
	basket, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#items').innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#yes"))); err != nil {
		t.Fatal(err)
	}
	log := ""
	if !strings.Contains(basket, "1 × sourdough") {
		t.Errorf("the basket after the delta: %q", basket)
	}
	for !strings.Contains(log, answer) {
		if log, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#log').innerText`)); err != nil {
			t.Fatalf("the page never showed the answer %q: %v (log %q)", answer, err, log)
		}
		if strings.Contains(log, "failed") || strings.Contains(log, "refused") {
			t.Fatalf("the page reports an error: %q", log)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the page never showed the answer %q (log %q)", answer, log)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
