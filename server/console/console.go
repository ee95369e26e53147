// Package console is bread's web console: one page, embedded in the binary,
// to run agents and pipelines, watch their crumbs and waterfalls, answer
// humans in the loop, read sessions, compare two runs, run evals and chart
// their history. It is for the server, which mounts it
// with server.Options.Console (bread dev always, bread start with
// `server.console: true`); the page itself only calls the HTTP API, so an
// application that wants its own UI should call that API instead.
package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
)

//go:embed static
var static embed.FS

// CSP is the Content-Security-Policy of every console response: scripts,
// styles and requests only to the console's own origin, no inline code, no
// frames, no forms posting elsewhere.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

// Prefix is the path under which the page's assets are served; the page
// itself is served at "/".
const Prefix = "/console/"

// Paths are the route patterns the console answers, in the server's
// gorilla/mux syntax.
var Paths = []string{"/", Prefix + "{file}"}

// asset is one embedded file with its encodings and validators.
type asset struct {
	ctype    string
	body, gz []byte
	etag     string // of body; the gzip variant's ends in -gz
}

// assets are the embedded files by request path, loaded once.
var assets = sync.OnceValue(func() map[string]*asset {
	out := map[string]*asset{}
	_ = fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		a := &asset{ctype: mime.TypeByExtension(path.Ext(p)), body: body, etag: base64.RawURLEncoding.EncodeToString(sum[:12])}
		if a.ctype == "" {
			a.ctype = "application/octet-stream"
		}
		if ext := path.Ext(p); ext == ".js" || ext == ".mjs" {
			a.ctype = "text/javascript; charset=utf-8"
		}
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		_, _ = zw.Write(body)
		_ = zw.Close()
		if gz.Len() < len(body) {
			a.gz = gz.Bytes()
		}
		name := strings.TrimPrefix(p, "static/")
		if name == "index.html" {
			out["/"] = a
		}
		out[Prefix+name] = a
		return nil
	})
	return out
})

// Handler serves the console: the page at "/" and its assets under
// Prefix, with CSP, an ETag answered by If-None-Match with 304, and gzip
// for a client that accepts it. Every other path is 404.
func Handler() http.Handler {
	return http.HandlerFunc(serve)
}

func serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	a, ok := assets()[r.URL.Path]
	if !ok {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"code":"NOT_FOUND","message":"no console file at this path"}}` + "\n"))
		return
	}
	body, etag := a.body, `"`+a.etag+`"`
	h.Set("Vary", "Accept-Encoding")
	if a.gz != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		body, etag = a.gz, `"`+a.etag+`-gz"`
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", etag)
	h.Set("Cache-Control", "no-cache") // revalidate: the ETag makes that a 304
	if matches(r.Header.Get("If-None-Match"), a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", a.ctype)
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// matches reports whether an If-None-Match list names either encoding of
// the asset (weak comparison, as RFC 9110 asks for If-None-Match).
func matches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == `"`+etag+`"` || t == `"`+etag+`-gz"` {
			return true
		}
	}
	return false
}

// acceptsGzip reads Accept-Encoding: gzip (or *) with a non-zero quality.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name != "gzip" && name != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		if q == "q=0" || q == "q=0.0" || q == "q=0.00" || q == "q=0.000" {
			return false
		}
		return true
	}
	return false
}

// FirstPaint is what a browser transfers to paint the console the first
// time: the page and every asset it loads at start (all of them), raw and
// as served with gzip.
func FirstPaint() (raw, gzipped int) {
	for p, a := range assets() {
		if p == "/" {
			continue
		}
		raw += len(a.body)
		if a.gz != nil {
			gzipped += len(a.gz)
		} else {
			gzipped += len(a.body)
		}
	}
	return raw, gzipped
}
