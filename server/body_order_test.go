package server_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server"
)

// rawRequest writes the head of a chunked POST and one chunk of a body it
// never finishes, and returns the response the server sends meanwhile.
func rawRequest(t *testing.T, addr, host, path, extra string) (*http.Response, net.Conn) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	head := "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + extra + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
	chunk := strings.Repeat("x", 4096)
	if _, err := conn.Write([]byte(head + "1000\r\n" + chunk + "\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer while the body is unfinished: %v", err)
	}
	return resp, conn
}

// waitClosed reads conn until the server closes it: EOF, or a reset when
// the server closed with part of the request unread. The minute only
// bounds the test.
func waitClosed(conn net.Conn) error {
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	_, err := io.Copy(io.Discard, conn)
	if errors.Is(err, syscall.ECONNRESET) {
		return nil
	}
	return err
}

// TestAForeignHostIsRefusedBeforeItsBodyIsRead: a request the Host guard
// refuses is answered at once, without waiting for (or buffering) its
// body, and its connection is closed without reading what is left of the
// body: net/http would otherwise drain up to 256 KiB of it, at the
// client's pace, first. The body deadline is an hour, so only a server
// that reads nothing more closes within the test's minute.
func TestAForeignHostIsRefusedBeforeItsBodyIsRead(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ts := f.serve(t, server.Options{BodyReadTimeout: time.Hour})
	for _, path := range []string{"/agents/writer/run", "/nowhere"} {
		resp, conn := rawRequest(t, ts.Listener.Addr().String(), "evil.com", path, "")
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("a foreign Host with an unfinished body to %s = %d, want 403", path, resp.StatusCode)
		}
		if err := waitClosed(conn); err != nil {
			t.Fatalf("%s: after the refusal: %v, want the server to close the connection", path, err)
		}
	}
	// The same from a cross-site page.
	resp, conn := rawRequest(t, ts.Listener.Addr().String(), "localhost", "/agents/writer/run", "Origin: https://evil.example\r\nSec-Fetch-Site: cross-site\r\n")
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a cross-site request with an unfinished body = %d", resp.StatusCode)
	}
	if err := waitClosed(conn); err != nil {
		t.Fatalf("cross-site: after the refusal: %v, want the server to close the connection", err)
	}
}

// TestASlowBodyTimesOut: an admitted request whose body stalls is answered
// 408 once BodyReadTimeout passes, instead of holding its connection.
func TestASlowBodyTimesOut(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ts := f.serve(t, server.Options{BodyReadTimeout: 200 * time.Millisecond})
	resp, _ := rawRequest(t, ts.Listener.Addr().String(), "localhost", "/agents/writer/run", "")
	if resp.StatusCode != http.StatusRequestTimeout || errorCodeOf(t, resp) != core.CodeRequestTimeout {
		t.Fatalf("a stalled body = %d, want 408 REQUEST_TIMEOUT", resp.StatusCode)
	}
}
