package httpsse_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/transports/httpsse"
	"github.com/breadai/bread/transports/httpstream"
	"github.com/breadai/bread/transports/httpstream/streamtest"
)

type remote struct {
	inst  *engine.Instance
	store *memory.Store
	url   string
}

// newRemote serves a bread over a real socket: an engine and the streaming
// routes of an httpstream.Ingress.
func newRemote(t testing.TB, turns ...modeltest.Turn) *remote {
	t.Helper()
	if len(turns) == 0 {
		turns = []modeltest.Turn{modeltest.Text("hello ", "there")}
	}
	model := modeltest.New(turns...)
	st := memory.New()
	inst, err := engine.New(engine.Config{
		Store: st, Providers: model.Registry("scripted"),
		Agents: []*core.Agent{{ID: "greeter", Model: core.ModelRef{Provider: "scripted", Model: "m"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inst.Stop(context.Background()) })
	ts := streamtest.Serve(t, httpstream.New(httpstream.Options{}), inst, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if a := r.Header.Get("Accept"); a != httpstream.ContentTypeSSE {
				t.Errorf("the SSE remote agent sent Accept %q", a)
			}
			next.ServeHTTP(w, r)
		})
	})
	return &remote{inst: inst, store: st, url: ts.URL}
}

func collect(seq func(func(core.Crumb, error) bool)) ([]core.Crumb, error) {
	var out []core.Crumb
	var last error
	for c, err := range seq {
		if c != nil {
			out = append(out, c)
		}
		if err != nil {
			last = err
		}
	}
	return out, last
}

func joined(cs []core.Crumb) (types, text string) {
	var ty []string
	var tx strings.Builder
	for _, c := range cs {
		if d, ok := c.(*core.TextDelta); ok {
			tx.WriteString(d.Delta)
			continue
		}
		ty = append(ty, c.CrumbType())
	}
	return strings.Join(ty, ","), tx.String()
}

func TestRemoteAgentRelaysARun(t *testing.T) {
	r := newRemote(t)
	crumbs, err := collect(httpsse.RemoteAgent(httpsse.RemoteOptions{URL: r.url}).Run(context.Background(), "greeter", "hi", core.RunOptions{}))
	ty, tx := joined(crumbs)
	if err != nil || ty != "agent:run:start,agent:run:end" || tx != "hello there" {
		t.Fatalf("relayed %s %q %v", ty, tx, err)
	}
}

func TestRemoteAgentFailures(t *testing.T) {
	r := newRemote(t, modeltest.Fail(&core.BreadError{Code: core.CodeProviderError, Message: "upstream"}))
	agent := httpsse.RemoteAgent(httpsse.RemoteOptions{URL: r.url, MaxRetries: 3, RetryDelay: time.Millisecond})

	// A failure before the run: the error event, at once, never retried.
	crumbs, err := collect(agent.Run(context.Background(), "ghost", "hi", core.RunOptions{}))
	if len(crumbs) != 0 || !errors.Is(err, core.ErrAgentNotFound) {
		t.Fatalf("unknown agent: %d crumbs, %v", len(crumbs), err)
	}
	// A failed run: its agent:error paired with the error.
	crumbs, err = collect(agent.Run(context.Background(), "greeter", "hi", core.RunOptions{}))
	var be *core.BreadError
	if !errors.As(err, &be) || be.Code != core.CodeProviderError || crumbs[len(crumbs)-1].CrumbType() != core.TypeAgentError {
		t.Fatalf("failed run: %v", err)
	}
	// Malformed events.
	for _, bad := range []string{"data: not json\n\n", "data: {\"type\":\"text:delta\",\"payload\":{\"type\":\"agent:run:end\"}}\n\n", "data: {\"type\":\"nope\",\"payload\":{}}\n\n"} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, bad) }))
		_, err := collect(httpsse.RemoteAgent(httpsse.RemoteOptions{URL: ts.URL}).Run(context.Background(), "x", nil, core.RunOptions{}))
		ts.Close()
		if !errors.Is(err, core.ErrProtocolDecode) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}

// dropProxy forwards connections to target. It cuts the client leg of the
// first connection after n bytes of response, and of every later one at
// once when cutAll is set, while the server leg stays open and drained: the
// client sees a dropped network, the server a slow reader.
type dropProxy struct {
	ln     net.Listener
	target string
	n      int64
	cutAll bool
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
	count  int
}

func newDropProxy(t *testing.T, target string, n int64, cutAll bool) *dropProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dropProxy{ln: ln, target: strings.TrimPrefix(target, "http://"), n: n, cutAll: cutAll}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *dropProxy) url() string { return "http://" + p.ln.Addr().String() }

func (p *dropProxy) connections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count
}

func (p *dropProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		first := p.count == 0
		p.count++
		p.mu.Unlock()
		limit := int64(-1)
		switch {
		case first:
			limit = p.n
		case p.cutAll:
			limit = 0
		}
		p.wg.Add(2)
		go func() { defer p.wg.Done(); _, _ = io.Copy(s, c) }()
		go func() {
			defer p.wg.Done()
			if limit < 0 {
				_, _ = io.Copy(c, s)
			} else {
				_, _ = io.CopyN(c, s, limit)
				c.Close()
				_, _ = io.Copy(io.Discard, s)
			}
			c.Close()
			s.Close()
		}()
	}
}

func (p *dropProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func slowText(n int) (modeltest.Turn, string) {
	chunks := make([]string, n)
	for i := range chunks {
		chunks[i] = "w" + strconv.Itoa(i) + " "
	}
	return modeltest.Slow(modeltest.Text(chunks...), 3*time.Millisecond), strings.Join(chunks, "")
}

func TestRemoteAgentReconnectsAfterADrop(t *testing.T) {
	turn, full := slowText(80)
	r := newRemote(t, turn)
	proxy := newDropProxy(t, r.url, 1500, false)
	signer := &countingSigner{}
	agent := httpsse.RemoteAgent(httpsse.RemoteOptions{URL: proxy.url(), RetryDelay: 5 * time.Millisecond, Signer: signer})
	crumbs, err := collect(agent.Run(context.Background(), "greeter", "hi", core.RunOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if n := proxy.connections(); n < 2 {
		t.Fatalf("no reconnect happened (%d connections)", n)
	}
	if n := signer.n.Load(); n != int64(proxy.connections()) {
		t.Fatalf("the signer ran %d times for %d requests: every reconnect is signed", n, proxy.connections())
	}
	ty, tx := joined(crumbs)
	if ty != "agent:run:start,agent:run:end" {
		t.Fatalf("durable crumbs %s: each exactly once", ty)
	}
	// At least once: a delta window may repeat, nothing is missing.
	if !noGap(tx, full) {
		t.Fatalf("text %q lost part of %q", tx, full)
	}
}

// noGap reports whether got is full with some stretches repeated, each
// repeat restarting no later than where the text had reached.
func noGap(got, full string) bool {
	pos := 0
	for _, w := range strings.SplitAfter(got, " ") {
		if w == "" {
			continue
		}
		k := strings.Index(full, w)
		if k < 0 || k > pos {
			return false
		}
		pos = max(pos, k+len(w))
	}
	return pos == len(full)
}

func TestRemoteAgentGivesUpAfterMaxRetries(t *testing.T) {
	turn, _ := slowText(200)
	r := newRemote(t, turn)
	proxy := newDropProxy(t, r.url, 1500, true)
	agent := httpsse.RemoteAgent(httpsse.RemoteOptions{URL: proxy.url(), MaxRetries: 2, RetryDelay: time.Millisecond})
	_, err := collect(agent.Run(context.Background(), "greeter", "hi", core.RunOptions{}))
	var be *core.BreadError
	if !errors.As(err, &be) || be.Code != core.CodeRemoteReconnect || be.Context["attempts"] != 2 || be.Context["agentId"] != "greeter" {
		t.Fatalf("err = %#v", err)
	}
}

func TestRemoteAgentDeduplicatesOnReconnect(t *testing.T) {
	var lastEventID string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		base := `"agentId":"a","runId":"r1","timestamp":1`
		if r.Method == "POST" {
			_, _ = io.WriteString(w, "retry: 3000\n\nid: 1\ndata: {\"type\":\"agent:run:start\",\"payload\":{\"type\":\"agent:run:start\","+base+",\"seq\":1,\"input\":null}}\n\n"+
				"id: 1\ndata: {\"type\":\"text:delta\",\"payload\":{\"type\":\"text:delta\","+base+",\"seq\":1,\"delta\":\"a\"}}\n\n")
			return // the stream ends without a terminal crumb: a drop
		}
		lastEventID = r.Header.Get("Last-Event-ID")
		_, _ = io.WriteString(w, "retry: 3000\n\n"+
			"id: 1\ndata: {\"type\":\"agent:run:start\",\"payload\":{\"type\":\"agent:run:start\","+base+",\"seq\":1,\"input\":null}}\n\n"+
			"id: 1\ndata: {\"type\":\"text:delta\",\"payload\":{\"type\":\"text:delta\","+base+",\"seq\":1,\"delta\":\"b\"}}\n\n"+
			": ping\n\n"+
			"id: 2\ndata: {\"type\":\"agent:run:end\",\"payload\":{\"type\":\"agent:run:end\","+base+",\"seq\":2,\"output\":\"ab\",\"durationMs\":1}}\n\n")
	}))
	defer ts.Close()
	crumbs, err := collect(httpsse.RemoteAgent(httpsse.RemoteOptions{URL: ts.URL, RetryDelay: time.Millisecond}).Run(context.Background(), "a", nil, core.RunOptions{}))
	ty, tx := joined(crumbs)
	if err != nil || ty != "agent:run:start,agent:run:end" || tx != "ab" || lastEventID != "1" {
		t.Fatalf("%s %q %v Last-Event-ID %q", ty, tx, err, lastEventID)
	}
}

func TestRemoteAgentCancel(t *testing.T) {
	reached := make(chan struct{})
	r := newRemote(t, modeltest.Block(reached, "a"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last error
	for c, err := range httpsse.RemoteAgent(httpsse.RemoteOptions{URL: r.url}).Run(ctx, "greeter", "hi", core.RunOptions{}) {
		if c != nil && c.CrumbType() == core.TypeAgentRunStart {
			<-reached
			cancel()
		}
		last = err
	}
	if !errors.Is(last, core.ErrRunCancelled) {
		t.Fatalf("cancel: %v", last)
	}
}

// countingSigner counts the requests it signs.
type countingSigner struct{ n atomic.Int64 }

func (s *countingSigner) Sign(_ context.Context, h http.Header) error {
	s.n.Add(1)
	h.Set("Authorization", "Bearer k")
	return nil
}
