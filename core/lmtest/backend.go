package lmtest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Backend is a local HTTP server standing in for a vendor's API during one
// scenario. It counts the requests it is serving, and its Client counts the
// response bodies the model has not closed, so the suite can check that
// every call released its connection however it ended.
type Backend struct {
	// URL is the server's base URL, http://127.0.0.1:port.
	URL string

	server *httptest.Server
	client *http.Client
	probe  *probe
	active atomic.Int64 // handlers running
	served atomic.Int64 // requests received
	open   atomic.Int64 // response bodies not yet closed
}

// NewBackend starts a server whose every request is served by h, ties it to
// s so the suite checks it after the case, and closes it when t ends. h
// writes s in the vendor's wire format; when s.Stall it calls s.Hang(r)
// after its chunks.
func NewBackend(t testing.TB, s Scenario, h http.Handler) *Backend {
	t.Helper()
	b := &Backend{probe: s.probe}
	b.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.active.Add(1)
		b.served.Add(1)
		defer b.active.Add(-1)
		h.ServeHTTP(w, r)
	}))
	b.URL = b.server.URL
	base := b.server.Client().Transport.(*http.Transport).Clone()
	b.client = &http.Client{Transport: &countingTransport{base: base, open: &b.open}}
	t.Cleanup(func() {
		s.probe.shutdown()
		b.server.CloseClientConnections()
		b.server.Close()
		base.CloseIdleConnections()
	})
	s.probe.add(b)
	return b
}

// Client returns the HTTP client the model under test must send its
// requests with.
func (b *Backend) Client() *http.Client { return b.client }

// Requests returns how many requests the backend has received.
func (b *Backend) Requests() int { return int(b.served.Load()) }

// Hang blocks a handler until its client goes away (or the backend shuts
// down): the end of a Stall scenario.
func (s Scenario) Hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.probe.closing():
	}
}

// WriteSSE writes one server-sent event (an empty event writes only the
// data field) and flushes it to the client.
func WriteSSE(w http.ResponseWriter, event, data string) {
	var b strings.Builder
	if event != "" {
		b.WriteString("event: " + event + "\n")
	}
	for line := range strings.SplitSeq(data, "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	_, _ = io.WriteString(w, b.String())
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// Abort drops the connection without finishing the response, as a cut
// stream does; call it from a handler, as its last statement.
func Abort(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	panic(http.ErrAbortHandler)
}

// countingTransport counts response bodies not yet closed.
type countingTransport struct {
	base http.RoundTripper
	open *atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if resp != nil && resp.Body != nil {
		c.open.Add(1)
		resp.Body = &countedBody{ReadCloser: resp.Body, open: c.open}
	}
	return resp, err
}

type countedBody struct {
	io.ReadCloser
	open *atomic.Int64
	once sync.Once
}

func (b *countedBody) Close() error {
	b.once.Do(func() { b.open.Add(-1) })
	return b.ReadCloser.Close()
}

// probe is what the suite knows of a scenario's backends.
type probe struct {
	mu       sync.Mutex
	backends []*Backend
	stop     chan struct{}
	once     sync.Once
}

func newProbe() *probe { return &probe{stop: make(chan struct{})} }

func (p *probe) add(b *Backend) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backends = append(p.backends, b)
}

func (p *probe) closing() <-chan struct{} {
	if p == nil {
		return nil
	}
	return p.stop
}

func (p *probe) shutdown() {
	if p != nil {
		p.once.Do(func() { close(p.stop) })
	}
}

func (p *probe) list() []*Backend {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*Backend(nil), p.backends...)
}

// released waits until every backend has finished serving and every
// response body is closed, and returns what is still held after the wait.
func (p *probe) released(wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		var held []string
		for _, b := range p.list() {
			if n := b.open.Load(); n > 0 {
				held = append(held, fmt.Sprintf("%d response bodies never closed", n))
			}
			if n := b.active.Load(); n > 0 {
				held = append(held, fmt.Sprintf("%d requests still being served (the model kept the connection)", n))
			}
		}
		if len(held) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s", strings.Join(held, "; "))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
