package httpchunked_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/extensions/auth/apikey"
	"github.com/breadai/bread/server"
	"github.com/breadai/bread/transports/httpchunked"
)

type remote struct {
	inst  *engine.Instance
	store *memory.Store
	url   string
}

// newRemote serves a bread with the chunked transport over a real socket.
func newRemote(t testing.TB, auth *server.Auth, turns ...modeltest.Turn) *remote {
	t.Helper()
	if len(turns) == 0 {
		turns = []modeltest.Turn{modeltest.Text("hello ", "there")}
	}
	model := modeltest.New(turns...)
	st := memory.New()
	inst, err := engine.New(engine.Config{
		Store: st, Bus: httpchunked.New(httpchunked.Options{}), Providers: model.Registry("scripted"),
		Agents: []*core.Agent{{ID: "greeter", Model: core.ModelRef{Provider: "scripted", Model: "m"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inst.Stop(context.Background()) })
	srv, err := server.New(inst, server.Options{Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return &remote{inst: inst, store: st, url: ts.URL}
}

func TestWireIsOneCrumbFramePerLine(t *testing.T) {
	r := newRemote(t, nil)
	res, err := http.Post(r.url+"/agents/greeter/run", "application/json", strings.NewReader(`{"input":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "application/x-ndjson" || res.StatusCode != 200 {
		t.Fatalf("status %d content type %q", res.StatusCode, ct)
	}
	sc := bufio.NewScanner(res.Body)
	var last map[string]any
	n := 0
	for sc.Scan() {
		var f map[string]any
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			t.Fatalf("line %q: %v", sc.Bytes(), err)
		}
		if f["v"] != 1.0 || f["type"] != "crumb" || f["runId"] == "" || f["seq"] == nil {
			t.Fatalf("not a CrumbFrame: %s", sc.Bytes())
		}
		last = f
		n++
	}
	if n != 4 || last["crumb"].(map[string]any)["type"] != core.TypeAgentRunEnd {
		t.Fatalf("%d frames, last %v", n, last)
	}
}

func TestFailuresBeforeTheRunAreAgentErrorFrames(t *testing.T) {
	r := newRemote(t, nil)
	for _, c := range []struct{ path, body, code string }{
		{"/agents/greeter/run", `{"input":`, core.CodeBadRequest},
		{"/agents/ghost/run", `{}`, core.CodeAgentNotFound},
		{"/pipelines/ghost/run", `{"input":{}}`, core.CodePipelineNotFound},
	} {
		res, err := http.Post(r.url+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		want := `{"v":1,"type":"crumb","runId":"","seq":0,"crumb":{"type":"agent:error",`
		if res.StatusCode != 200 || !strings.HasPrefix(string(body), want) || !strings.Contains(string(body), `"code":"`+c.code+`"`) {
			t.Fatalf("%s = %d %s", c.path, res.StatusCode, body)
		}
	}
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

func TestRemoteAgentSignsWithAnAPIKey(t *testing.T) {
	strategy, err := apikey.Strategy(apikey.Options{Scheme: "Bearer", Keys: []string{"k-1"}})
	if err != nil {
		t.Fatal(err)
	}
	r := newRemote(t, &server.Auth{
		Strategies: []core.BreadAuthStrategy{strategy},
		Authorize: func(_ context.Context, id *core.AuthIdentity, action string, _ map[string]string) bool {
			return id.Subject == "api-key" && action == core.ActionRunStart
		},
	})
	signer, err := apikey.Signer(apikey.Options{Scheme: "Bearer", Keys: []string{"k-1"}})
	if err != nil {
		t.Fatal(err)
	}
	crumbs, err := collect(t, httpchunked.RemoteAgent(httpchunked.RemoteOptions{URL: r.url, Signer: signer}).Run(context.Background(), "greeter", "hi", core.RunOptions{}))
	if err != nil || crumbs[len(crumbs)-1].CrumbType() != core.TypeAgentRunEnd {
		t.Fatalf("signed run: %v", err)
	}
	_, err = collect(t, httpchunked.RemoteAgent(httpchunked.RemoteOptions{URL: r.url}).Run(context.Background(), "greeter", "hi", core.RunOptions{}))
	var be *core.BreadError
	if !errors.As(err, &be) || be.Context["status"] != 401 {
		t.Fatalf("unsigned run: %v", err)
	}
}
