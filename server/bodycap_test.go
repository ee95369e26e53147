package server_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server"
)

// send posts n bytes to url, with a declared length or chunked, and the
// header pairs given, on a connection of its own, and reads the reply
// whatever became of writing the body. A server refusing an oversize body
// answers before reading all of it and then closes; http.Client, still
// writing, may report that as a broken pipe instead of the reply (seen
// under load in CI), and the reply is what these tests are about.
func send(t *testing.T, method, url string, n int, chunked bool, hdr ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(make([]byte, n)))
	if err != nil {
		t.Fatal(err)
	}
	if chunked {
		req.ContentLength = -1 // Request.Write sends a body of unknown length chunked
	}
	setHeaders(req, hdr...)
	conn, err := net.Dial("tcp", req.URL.Host)
	if err != nil {
		t.Fatal(err)
	}
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		_ = req.Write(conn) // an error here is the server closing early; the reply tells
	}()
	defer func() {
		conn.Close()
		<-wrote
	}()
	res, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{status: res.StatusCode, header: res.Header, body: b}
}

// TestTheBodyCapRunsAheadOfRouting: an oversize body is 413 on a path no
// route serves and with a method the path does not serve, chunked or
// declared, instead of 404 or 405 (issue 28).
func TestTheBodyCapRunsAheadOfRouting(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ts := f.serve(t, server.Options{MaxBodyBytes: 1000})
	for _, c := range []struct {
		method, path string
		n            int
		chunked      bool
		status       int
		code         string
	}{
		{"POST", "/no/such/path", 5000, true, 413, core.CodeBodyTooLarge},
		{"POST", "/no/such/path", 5000, false, 413, core.CodeBodyTooLarge},
		{"PUT", "/agents", 5000, true, 413, core.CodeBodyTooLarge},
		{"POST", "/no/such/path", 1000, true, 404, core.CodeNotFound},
		{"PUT", "/agents", 1000, true, 405, server.CodeMethodNotAllowed},
	} {
		r := send(t, c.method, ts.URL+c.path, c.n, c.chunked)
		if r.status != c.status || r.errorCode(t) != c.code {
			t.Errorf("%s %s, %d bytes (chunked %v) = %d %s, want %d %s", c.method, c.path, c.n, c.chunked, r.status, r.body, c.status, c.code)
		}
	}
}

// TestTheBodyCapRunsAheadOfPluginMiddleware: a plugin middleware (here
// an auth plugin's, which authenticates before any route matched) that
// reads a chunked body reads at most the cap and then an
// *http.MaxBytesError, and the request is 413.
func TestTheBodyCapRunsAheadOfPluginMiddleware(t *testing.T) {
	var mu sync.Mutex
	var read int
	var readErr error
	reader := middlewarePlugin{"reader", func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, err := io.ReadAll(r.Body)
			mu.Lock()
			read, readErr = len(b), err
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
			next.ServeHTTP(w, r)
		})
	}}
	allow := func(_ context.Context, id *core.AuthIdentity, _ string, _ map[string]string) bool { return id != nil }
	f := newFixture(t, fakeConfig{Plugins: []core.BreadPlugin{server.AuthPlugin(headerAuth{}), reader}})
	ts := f.serve(t, server.Options{MaxBodyBytes: 1000, Auth: &server.Auth{Authorize: allow}})

	for _, path := range []string{"/agents/writer/run", "/no/such/path"} {
		r := send(t, "POST", ts.URL+path, 5000, true, "X-Identity", "alice")
		mu.Lock()
		n, err := read, readErr
		mu.Unlock()
		var tooBig *http.MaxBytesError
		if r.status != 413 || r.errorCode(t) != core.CodeBodyTooLarge || n > 1000 || !errors.As(err, &tooBig) {
			t.Errorf("POST %s, 5000 bytes chunked = %d %s; the middleware read %d bytes, error %v", path, r.status, r.body, n, err)
		}
	}
	// Without credentials the auth plugin refuses first: nothing is read.
	mu.Lock()
	read = -1
	mu.Unlock()
	r := send(t, "POST", ts.URL+"/agents/writer/run", 5000, true)
	mu.Lock()
	defer mu.Unlock()
	if r.status != 401 || read != -1 {
		t.Errorf("no credentials = %d, the middleware read %d", r.status, read)
	}
	if n := f.inst.Runs(); n != 0 {
		t.Errorf("the engine started %d runs", n)
	}
}
