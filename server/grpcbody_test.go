package server_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server"
)

// h2cClient speaks unencrypted HTTP/2 with prior knowledge only, as a
// plaintext gRPC client does.
func h2cClient(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func TestHTTP2BesideHTTP1(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	addr := listen(t, f, server.Options{})
	for _, c := range []struct {
		name   string
		client *http.Client
		proto  int
	}{{"HTTP/1.1", &http.Client{Transport: &http.Transport{}}, 1}, {"h2c", h2cClient(t), 2}} {
		res, err := c.client.Get("http://" + addr + "/agents")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		res.Body.Close()
		if res.StatusCode != 200 || res.ProtoMajor != c.proto {
			t.Fatalf("%s: %d over HTTP/%d", c.name, res.StatusCode, res.ProtoMajor)
		}
	}

	// Over TLS, HTTP/2 is negotiated by ALPN.
	srv, err := server.New(f.inst, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = srv.HTTPServer(srv.Handler())
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(ts.Close)
	res, err := ts.Client().Get(ts.URL + "/agents")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.ProtoMajor != 2 {
		t.Fatalf("TLS: %d over HTTP/%d", res.StatusCode, res.ProtoMajor)
	}
}

// grpcSink is a route handler that says it serves gRPC: it reads its body
// and answers how much it read, 413 when the read met the cap and 408 when
// it met the deadline.
type grpcSink struct{}

func (grpcSink) ServesGRPC() bool { return true }

func (grpcSink) ServeHTTP(w http.ResponseWriter, r *http.Request) { readAndTell(w, r) }

func readAndTell(w http.ResponseWriter, r *http.Request) {
	n, err := io.Copy(io.Discard, r.Body)
	w.Header().Set("X-Read", strconv.FormatInt(n, 10))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		w.WriteHeader(http.StatusRequestEntityTooLarge)
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.WriteHeader(http.StatusRequestTimeout)
	case err != nil:
		w.WriteHeader(http.StatusBadRequest)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// frame is one gRPC message of n bytes: a flag byte, its length, the bytes.
func frame(n int) []byte {
	b := make([]byte, 5+n)
	binary.BigEndian.PutUint32(b[1:5], uint32(n))
	return b
}

func TestGRPCBodyGuards(t *testing.T) {
	const timeout = 200 * time.Millisecond
	plugin := routesPlugin{"sink", func(r core.Router) {
		r.Handle("sink.grpc", "POST", "/pkg.Service/{method}", grpcSink{})
		r.Handle("sink.plain", "POST", "/plain", http.HandlerFunc(readAndTell))
	}}
	f := newFixture(t, fakeConfig{Plugins: []core.BreadPlugin{plugin}})
	addr := listen(t, f, server.Options{MaxBodyBytes: 100, BodyReadTimeout: timeout})
	h2c := h2cClient(t)
	h1 := &http.Client{Transport: &http.Transport{}}

	send := func(t *testing.T, client *http.Client, path string, body io.Reader) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://"+addr+path, body)
		req.Header.Set("Content-Type", "application/grpc+proto")
		req.ContentLength = -1
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode, res.Header.Get("X-Read")
	}
	twoMessages := func() io.Reader { return io.MultiReader(bytes.NewReader(frame(80)), bytes.NewReader(frame(80))) }

	t.Run("the cap is per message", func(t *testing.T) {
		if code, n := send(t, h2c, "/pkg.Service/Call", twoMessages()); code != 204 || n != "170" {
			t.Fatalf("two messages of 80 bytes = %d, read %s", code, n)
		}
		if code, n := send(t, h2c, "/pkg.Service/Call", io.MultiReader(bytes.NewReader(frame(100)), bytes.NewReader(frame(0)))); code != 204 || n != "110" {
			t.Fatalf("a message at the cap = %d, read %s", code, n)
		}
		if code, _ := send(t, h2c, "/pkg.Service/Call", bytes.NewReader(frame(101))); code != 413 {
			t.Fatalf("a message over the cap = %d", code)
		}
	})
	t.Run("other routes and HTTP/1 keep the whole-body guards", func(t *testing.T) {
		if code, _ := send(t, h2c, "/plain", twoMessages()); code != 413 {
			t.Fatalf("a gRPC content type on another route = %d", code)
		}
		if code, _ := send(t, h1, "/pkg.Service/Call", twoMessages()); code != 413 {
			t.Fatalf("gRPC over HTTP/1.1 = %d", code)
		}
	})
	t.Run("the deadline ends with the first message", func(t *testing.T) {
		pr, pw := io.Pipe()
		go func() {
			_, _ = pw.Write(frame(10))
			time.Sleep(3 * timeout) // past the body deadline
			_, _ = pw.Write(frame(10))
			_ = pw.Close()
		}()
		if code, n := send(t, h2c, "/pkg.Service/Call", pr); code != 204 || n != "30" {
			t.Fatalf("a stream slower than the deadline after its first message = %d, read %s", code, n)
		}
	})
	t.Run("a first message that does not come is cut", func(t *testing.T) {
		pr, pw := io.Pipe()
		defer pw.Close()
		go func() { _, _ = pw.Write(frame(10)[:7]) }() // the prefix and two bytes, then nothing
		if code, n := send(t, h2c, "/pkg.Service/Call", pr); code != 408 || n != "7" {
			t.Fatalf("a first message that never ends = %d, read %s", code, n)
		}
	})
}
