package console_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/breadai/bread/server/console"
)

func get(t *testing.T, path string, hdr ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	console.Handler().ServeHTTP(w, req)
	return w.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPageAndAssets(t *testing.T) {
	res := get(t, "/")
	page := body(t, res)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/html; charset=utf-8" || !strings.Contains(page, "<title>bread console</title>") {
		t.Fatalf("GET / = %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if res.Header.Get("Content-Security-Policy") != console.CSP || res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("headers %v", res.Header)
	}
	// Every file the page and its modules load is served, from our origin.
	refs := regexp.MustCompile(`(?:href|src)="(/console/[^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(refs) != 2 {
		t.Fatalf("the page loads %v", refs)
	}
	for _, r := range refs {
		res := get(t, r[1])
		text := body(t, res)
		if res.StatusCode != 200 || res.Header.Get("Content-Security-Policy") == "" {
			t.Fatalf("GET %s = %d", r[1], res.StatusCode)
		}
		if strings.HasSuffix(r[1], ".js") {
			if res.Header.Get("Content-Type") != "text/javascript; charset=utf-8" {
				t.Fatalf("%s is %q", r[1], res.Header.Get("Content-Type"))
			}
			for _, imp := range regexp.MustCompile(`from '\./([a-z]+\.js)'`).FindAllStringSubmatch(text, -1) {
				if res := get(t, "/console/"+imp[1]); res.StatusCode != 200 {
					t.Fatalf("%s imports %s: %d", r[1], imp[1], res.StatusCode)
				}
			}
		}
	}
	if res := get(t, "/console/nope.js"); res.StatusCode != 404 || !strings.Contains(body(t, res), `"NOT_FOUND"`) {
		t.Fatalf("a missing file = %d", res.StatusCode)
	}
}

func TestNoThirdPartyOrInlineCode(t *testing.T) {
	for _, p := range []string{"/", "/console/app.js", "/console/run.js", "/console/api.js", "/console/form.js", "/console/dom.js", "/console/waterfall.js", "/console/chart.js", "/console/console.css"} {
		// The SVG namespace is a name, not an address the page fetches.
		text := strings.ReplaceAll(body(t, get(t, p)), "'http://www.w3.org/2000/svg'", "")
		for _, bad := range []string{"http://", "https://", "<script>", "style=\"", "onclick=\"", "eval(", "innerHTML"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s contains %q", p, bad)
			}
		}
	}
}

func TestETagAndGzip(t *testing.T) {
	res := get(t, "/console/run.js")
	plain := body(t, res)
	etag := res.Header.Get("ETag")
	if etag == "" || res.Header.Get("Cache-Control") != "no-cache" || res.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("headers %v", res.Header)
	}
	if res := get(t, "/console/run.js", "If-None-Match", etag); res.StatusCode != 304 || body(t, res) != "" {
		t.Fatalf("If-None-Match = %d", res.StatusCode)
	}
	if res := get(t, "/console/run.js", "If-None-Match", `"other"`); res.StatusCode != 200 {
		t.Fatalf("another tag = %d", res.StatusCode)
	}
	res = get(t, "/console/run.js", "Accept-Encoding", "br, gzip")
	if res.Header.Get("Content-Encoding") != "gzip" || res.Header.Get("ETag") == etag {
		t.Fatalf("gzip headers %v", res.Header)
	}
	zr, err := gzip.NewReader(bytes.NewReader([]byte(body(t, res))))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, _ := io.ReadAll(zr)
	if string(unzipped) != plain {
		t.Fatal("the gzip body is not the file")
	}
	if res := get(t, "/console/run.js", "Accept-Encoding", "gzip;q=0"); res.Header.Get("Content-Encoding") != "" {
		t.Fatal("gzip;q=0 got gzip")
	}
	if res := get(t, "/console/run.js", "Accept-Encoding", "gzip", "If-None-Match", `W/`+etag); res.StatusCode != 304 {
		t.Fatalf("a weak match of the other encoding = %d", res.StatusCode)
	}
}

// TestStaticUnder40KBGzipped: every static file of the console, as served
// with gzip, stays under 40 KB: the console is a few ES modules, not an
// application bundle.
func TestStaticUnder40KBGzipped(t *testing.T) {
	_, gz := console.FirstPaint()
	t.Logf("static files: %d bytes gzipped", gz)
	if gz >= 40_000 {
		t.Fatalf("the static files are %d bytes gzipped, want under 40,000", gz)
	}
}

// TestFirstPaintUnder100KB: the whole console, every file, is what a first
// visit transfers; it must stay under 100 KB.
func TestFirstPaintUnder100KB(t *testing.T) {
	raw, gz := console.FirstPaint()
	t.Logf("first paint: %d bytes raw, %d bytes gzip", raw, gz)
	if raw >= 100_000 {
		t.Fatalf("first paint is %d bytes uncompressed", raw)
	}
	if gz >= raw {
		t.Fatalf("gzip %d >= raw %d", gz, raw)
	}
}
