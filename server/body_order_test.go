package server_test

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/server"
)

// rawRequest writes the head of a chunked POST and one chunk of a body it
// never finishes, and returns the response the server sends meanwhile.
func rawRequest(t *testing.T, addr, host string) (*http.Response, net.Conn) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	head := "POST /agents/writer/run HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
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

// TestAForeignHostIsRefusedBeforeItsBodyIsRead: a request the Host guard
// refuses is answered at once, without waiting for (or buffering) its body.
func TestAForeignHostIsRefusedBeforeItsBodyIsRead(t *testing.T) {
	f := newFixture(t, engine.Config{})
	ts := f.serve(t, server.Options{})
	resp, _ := rawRequest(t, ts.Listener.Addr().String(), "evil.com")
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a foreign Host with an unfinished body = %d", resp.StatusCode)
	}
}

// TestASlowBodyTimesOut: an admitted request whose body stalls is answered
// 408 once BodyReadTimeout passes, instead of holding its connection.
func TestASlowBodyTimesOut(t *testing.T) {
	f := newFixture(t, engine.Config{})
	ts := f.serve(t, server.Options{BodyReadTimeout: 200 * time.Millisecond})
	resp, _ := rawRequest(t, ts.Listener.Addr().String(), "localhost")
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("a stalled body = %d, want 408", resp.StatusCode)
	}
}
