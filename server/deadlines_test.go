package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server"
)

// listen serves a server for f with opts on a loopback port through
// Serve (so with its timeouts and connection cap) until the test ends, and
// returns the address.
func listen(t *testing.T, f *fixture, opts server.Options) string {
	t.Helper()
	srv, err := server.New(f.inst, opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// dial connects to addr, writes raw and returns the connection, closed
// when the test ends.
func dial(t *testing.T, addr, raw string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	return conn
}

// readCut reads the answer to a request whose body never finished, and
// then requires the server to close the connection. The read deadline only
// bounds the test: the server must act long before it.
func readCut(t *testing.T, conn net.Conn) *http.Response {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(strings.NewReader(string(body)))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("after the answer to a stalled body: %v, want the server to close the connection", err)
	}
	return res
}

func errorCodeOf(t *testing.T, res *http.Response) string {
	t.Helper()
	var b struct {
		Error core.ClientError `json:"error"`
	}
	if err := json.NewDecoder(res.Body).Decode(&b); err != nil {
		t.Fatalf("the answer is not an error object: %v", err)
	}
	return b.Error.Code
}

// TestStalledBodiesAreCut: a body that stops coming, declared length or
// chunked, whole or in part, is answered 408 REQUEST_TIMEOUT once
// BodyReadTimeout passes, and its connection is closed.
func TestStalledBodiesAreCut(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	addr := listen(t, f, server.Options{BodyReadTimeout: 100 * time.Millisecond})
	head := "POST /agents/writer/run HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
	for name, req := range map[string]string{
		"declared, nothing sent":   head + "Content-Length: 100\r\n\r\n",
		"declared, part sent":      head + "Content-Length: 100\r\n\r\n{\"input\":",
		"chunked, nothing sent":    head + "Transfer-Encoding: chunked\r\n\r\n",
		"chunked, one chunk sent":  head + "Transfer-Encoding: chunked\r\n\r\n9\r\n{\"input\":\r\n",
		"chunked, half a chunk":    head + "Transfer-Encoding: chunked\r\n\r\n20\r\n{\"input\":",
		"unmatched path, declared": "POST /nowhere HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			res := readCut(t, dial(t, addr, req))
			if res.StatusCode != http.StatusRequestTimeout {
				t.Fatalf("status %d, want 408", res.StatusCode)
			}
			if code := errorCodeOf(t, res); code != core.CodeRequestTimeout {
				t.Fatalf("code %s, want %s", code, core.CodeRequestTimeout)
			}
		})
	}
	if n := f.inst.Runs(); n != 0 {
		t.Errorf("bodies that never came started %d runs", n)
	}
}

// opaqueWriter hides the ResponseWriter it wraps from
// http.ResponseController, as some middleware does.
type opaqueWriter struct{ w http.ResponseWriter }

func (o opaqueWriter) Header() http.Header         { return o.w.Header() }
func (o opaqueWriter) Write(b []byte) (int, error) { return o.w.Write(b) }
func (o opaqueWriter) WriteHeader(code int)        { o.w.WriteHeader(code) }

// TestTheBodyDeadlineHoldsBehindAnOpaqueMiddleware: the deadline is set
// before plugin middleware runs, so a middleware that wraps the writer
// opaquely does not switch it off.
func TestTheBodyDeadlineHoldsBehindAnOpaqueMiddleware(t *testing.T) {
	mw := middlewarePlugin{"opaque", func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { next.ServeHTTP(opaqueWriter{w}, r) })
	}}
	f := newFixture(t, fakeConfig{Plugins: []core.BreadPlugin{mw}})
	addr := listen(t, f, server.Options{BodyReadTimeout: 100 * time.Millisecond})
	conn := dial(t, addr, "POST /agents/writer/run HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n")
	if res := readCut(t, conn); res.StatusCode != http.StatusRequestTimeout || errorCodeOf(t, res) != core.CodeRequestTimeout {
		t.Fatalf("status %d, want 408 REQUEST_TIMEOUT", res.StatusCode)
	}
}

// TestStreamsOutliveTheBodyDeadline: the deadline covers the body only. A
// run that streams for many times BodyReadTimeout ends normally, and the
// connection then serves the next request (keep-alive).
func TestStreamsOutliveTheBodyDeadline(t *testing.T) {
	f := newFixture(t, fakeConfig{Pieces: []string{"a", "b", "c", "d"}, Pace: 50 * time.Millisecond})
	addr := listen(t, f, server.Options{BodyReadTimeout: 20 * time.Millisecond})
	body := `{"input":"hi"}`
	req := "POST /agents/writer/run HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	conn := dial(t, addr, req)
	_ = conn.SetDeadline(time.Now().Add(time.Minute)) // bounds the test
	br := bufio.NewReader(conn)
	for i := range 2 {
		if i > 0 {
			if _, err := io.WriteString(conn, req); err != nil {
				t.Fatal(err)
			}
		}
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		out, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK || !strings.Contains(string(out), `"output":"abcd"`) {
			t.Fatalf("request %d: %d %v\n%s", i, res.StatusCode, err, out)
		}
	}
}
