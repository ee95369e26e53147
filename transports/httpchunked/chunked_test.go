package httpchunked_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/transports/httpchunked"
	"github.com/breadai/bread/transports/httpstream"
	"github.com/breadai/bread/transports/httpstream/streamtest"
)

type remote struct {
	inst  *engine.Instance
	store *memory.Store
	url   string
}

// newRemote serves a bread over a real socket: an engine and the streaming
// routes of an httpstream.Ingress, wrapped in middleware.
func newRemote(t testing.TB, middleware []func(http.Handler) http.Handler, turns ...modeltest.Turn) *remote {
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
	ts := streamtest.Serve(t, httpstream.New(httpstream.Options{}), inst, middleware...)
	return &remote{inst: inst, store: st, url: ts.URL}
}

func collect(t *testing.T, seq func(func(core.Crumb, error) bool)) ([]core.Crumb, error) {
	t.Helper()
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

func TestRemoteAgentRelaysARun(t *testing.T) {
	r := newRemote(t, nil)
	agent := httpchunked.RemoteAgent(httpchunked.RemoteOptions{URL: r.url + "/"})
	crumbs, err := collect(t, agent.Run(context.Background(), "greeter", "hi", core.RunOptions{Session: core.SessionOptions{ID: "s-1"}}))
	if err != nil {
		t.Fatal(err)
	}
	var txt strings.Builder
	for _, c := range crumbs {
		if d, ok := c.(*core.TextDelta); ok {
			txt.WriteString(d.Delta)
		}
	}
	if crumbs[0].CrumbType() != core.TypeAgentRunStart || crumbs[len(crumbs)-1].CrumbType() != core.TypeAgentRunEnd || txt.String() != "hello there" {
		t.Fatalf("relayed %d crumbs, text %q", len(crumbs), txt.String())
	}
	if crumbs[0].Base().SessionID != "s-1" {
		t.Fatalf("session %q did not travel", crumbs[0].Base().SessionID)
	}
}

func TestRemoteAgentThroughALocalInstance(t *testing.T) {
	r := newRemote(t, nil)
	local, err := engine.New(engine.Config{Store: memory.New(), RemoteAgents: map[string]core.RemoteAgent{
		"researcher": httpchunked.RemoteAgent(httpchunked.RemoteOptions{URL: r.url}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := local.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer local.Stop(context.Background())
	// The remote serves "greeter"; the local id maps onto the same path.
	res, err := local.RunSync(context.Background(), "researcher", "hi", core.RunOptions{})
	var be *core.BreadError
	if !errors.As(err, &be) || be.Code != core.CodeAgentNotFound {
		t.Fatalf("unknown remote agent: %v %v", res, err)
	}
}

func TestRemoteAgentErrors(t *testing.T) {
	r := newRemote(t, nil, modeltest.Fail(&core.BreadError{Code: core.CodeProviderError, Message: "upstream 500", Context: map[string]any{"key": "sk-123"}}, "par"))
	agent := httpchunked.RemoteAgent(httpchunked.RemoteOptions{URL: r.url})

	// A failed run: the agent:error crumb comes paired with its error.
	crumbs, err := collect(t, agent.Run(context.Background(), "greeter", "hi", core.RunOptions{}))
	var be *core.BreadError
	if !errors.As(err, &be) || crumbs[len(crumbs)-1].CrumbType() != core.TypeAgentError {
		t.Fatalf("failed run: %v", err)
	}
	if be.Context != nil {
		t.Fatalf("error context crossed the wire: %v", be.Context)
	}

	// A refused request is REMOTE_AGENT_ERROR naming the status.
	gone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"code":"BUSY","message":"later"}}`))
	}))
	defer gone.Close()
	_, err = collect(t, httpchunked.RemoteAgent(httpchunked.RemoteOptions{URL: gone.URL}).Run(context.Background(), "greeter", "hi", core.RunOptions{}))
	if !errors.As(err, &be) || be.Code != core.CodeRemoteAgentError || be.Context["status"] != 503 || be.Context["remoteCode"] != "BUSY" {
		t.Fatalf("refused request: %#v", err)
	}

	// A malformed line is PROTOCOL_DECODE_ERROR.
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("\n{\"v\":2}\n"))
	}))
	defer garbage.Close()
	_, err = collect(t, httpchunked.RemoteAgent(httpchunked.RemoteOptions{URL: garbage.URL}).Run(context.Background(), "greeter", "hi", core.RunOptions{}))
	if !errors.Is(err, core.ErrProtocolDecode) {
		t.Fatalf("malformed line: %v", err)
	}

	// Nothing listening: REMOTE_AGENT_ERROR.
	_, err = collect(t, httpchunked.RemoteAgent(httpchunked.RemoteOptions{URL: "http://127.0.0.1:1"}).Run(context.Background(), "greeter", "hi", core.RunOptions{}))
	if !errors.As(err, &be) || be.Code != core.CodeRemoteAgentError {
		t.Fatalf("unreachable: %v", err)
	}
}

func TestRemoteAgentCancelStopsTheRemoteRun(t *testing.T) {
	reached := make(chan struct{})
	r := newRemote(t, nil, modeltest.Block(reached, "a", "b"))
	agent := httpchunked.RemoteAgent(httpchunked.RemoteOptions{URL: r.url})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var runID string
	var last error
	for c, err := range agent.Run(ctx, "greeter", "hi", core.RunOptions{}) {
		if s, ok := c.(*core.AgentRunStart); ok {
			runID = s.RunID
			<-reached
			cancel()
		}
		last = err
	}
	if !errors.Is(last, core.ErrRunCancelled) {
		t.Fatalf("local error %v, want RUN_CANCELLED", last)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		entries, _ := r.store.GetCrumbs(context.Background(), runID, 0, 0)
		for _, e := range entries {
			if ae, ok := e.Crumb.(*core.AgentError); ok && ae.Error.Code == core.CodeRunCancelled {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the remote run was not cancelled")
}

// bearerSigner signs like an API-key signer would, without importing one:
// the transport's tests need no auth adapter.
type bearerSigner string

func (k bearerSigner) Sign(_ context.Context, h http.Header) error {
	h.Set("Authorization", "Bearer "+string(k))
	return nil
}

func TestRemoteAgentSignsWithAnAPIKey(t *testing.T) {
	// What the server's auth does: no valid key, 401.
	requireKey := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer k-1" {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"error":{"code":"UNAUTHORIZED","message":"no key"}}`))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	r := newRemote(t, []func(http.Handler) http.Handler{requireKey})
	crumbs, err := collect(t, httpchunked.RemoteAgent(httpchunked.RemoteOptions{URL: r.url, Signer: bearerSigner("k-1")}).Run(context.Background(), "greeter", "hi", core.RunOptions{}))
	if err != nil || crumbs[len(crumbs)-1].CrumbType() != core.TypeAgentRunEnd {
		t.Fatalf("signed run: %v", err)
	}
	_, err = collect(t, httpchunked.RemoteAgent(httpchunked.RemoteOptions{URL: r.url}).Run(context.Background(), "greeter", "hi", core.RunOptions{}))
	var be *core.BreadError
	if !errors.As(err, &be) || be.Context["status"] != 401 || be.Context["remoteCode"] != "UNAUTHORIZED" {
		t.Fatalf("unsigned run: %v", err)
	}
}

// The server serves SSE too; this client asks for NDJSON and gets it.
func TestRemoteAgentAsksForNDJSON(t *testing.T) {
	var accept string
	spy := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			accept = r.Header.Get("Accept")
			next.ServeHTTP(w, r)
		})
	}
	r := newRemote(t, []func(http.Handler) http.Handler{spy})
	if _, err := collect(t, httpchunked.RemoteAgent(httpchunked.RemoteOptions{URL: r.url}).Run(context.Background(), "greeter", "hi", core.RunOptions{})); err != nil {
		t.Fatal(err)
	}
	if accept != httpstream.ContentTypeNDJSON {
		t.Fatalf("Accept %q", accept)
	}
}
