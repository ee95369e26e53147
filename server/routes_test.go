package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/server"
)

func TestAgentRoutes(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ts := f.serve(t, server.Options{})

	r := do(t, ts.URL, "GET", "/agents", "")
	if r.status != 200 {
		t.Fatalf("GET /agents = %d %s", r.status, r.body)
	}
	var list []map[string]any
	r.decode(t, &list)
	if len(list) != 2 || list[0]["id"] != "analyst" || list[1]["id"] != "writer" {
		t.Fatalf("GET /agents = %s", r.body)
	}
	if list[0]["outputFormat"] != "text" || list[1]["outputFormat"] != "markdown" {
		t.Fatalf("output formats: %s", r.body)
	}
	if m := list[1]["model"].(map[string]any); m["provider"] != "scripted" || m["model"] != "m1" {
		t.Fatalf("model: %s", r.body)
	}

	r = do(t, ts.URL, "GET", "/agents/writer", "")
	var one map[string]any
	r.decode(t, &one)
	if r.status != 200 || one["id"] != "writer" {
		t.Fatalf("GET /agents/writer = %d %s", r.status, r.body)
	}
	r = do(t, ts.URL, "GET", "/agents/ghost", "")
	if r.status != 404 || r.errorCode(t) != core.CodeAgentNotFound {
		t.Fatalf("GET /agents/ghost = %d %s", r.status, r.body)
	}
}

func TestSessionRoutes(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ctx := context.Background()
	for _, s := range []core.NewSession{
		{ID: "s1", Tags: map[string]string{"user": "42", "team": "a"}},
		{ID: "s2", Tags: map[string]string{"user": "42", "team": "b"}},
		{ID: "s3", Tags: map[string]string{"user": "7", "url": "http://x"}},
	} {
		if _, err := f.store.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	ts := f.serve(t, server.Options{})

	ids := func(r reply) []string {
		t.Helper()
		if r.status != 200 {
			t.Fatalf("status %d %s", r.status, r.body)
		}
		var list []core.Session
		r.decode(t, &list)
		out := []string{}
		for _, s := range list {
			out = append(out, s.ID)
		}
		return out
	}
	if got := ids(do(t, ts.URL, "GET", "/sessions", "")); len(got) != 3 {
		t.Fatalf("all sessions = %v", got)
	}
	if got := ids(do(t, ts.URL, "GET", "/sessions?tag=user:42", "")); len(got) != 2 {
		t.Fatalf("user:42 = %v", got)
	}
	if got := ids(do(t, ts.URL, "GET", "/sessions?tag=user:42&tag=team:b", "")); len(got) != 1 || got[0] != "s2" {
		t.Fatalf("user:42 team:b = %v", got)
	}
	if got := ids(do(t, ts.URL, "GET", "/sessions?tag=url:http://x", "")); len(got) != 1 || got[0] != "s3" {
		t.Fatalf("a value with colons = %v", got)
	}
	for _, bad := range []string{"/sessions?tag=nocolon", "/sessions?tag=:v"} {
		if r := do(t, ts.URL, "GET", bad, ""); r.status != 400 || r.errorCode(t) != core.CodeBadRequest {
			t.Fatalf("GET %s = %d %s", bad, r.status, r.body)
		}
	}

	r := do(t, ts.URL, "GET", "/sessions/s1", "")
	var s core.Session
	r.decode(t, &s)
	if r.status != 200 || s.ID != "s1" || s.Tags["team"] != "a" {
		t.Fatalf("GET /sessions/s1 = %d %s", r.status, r.body)
	}
	if r := do(t, ts.URL, "GET", "/sessions/ghost", ""); r.status != 404 || r.errorCode(t) != core.CodeSessionNotFound {
		t.Fatalf("GET /sessions/ghost = %d %s", r.status, r.body)
	}

	// The static segment outranks the parameter.
	r = do(t, ts.URL, "POST", "/sessions/cleanup", `{"tags":{"user":"42"}}`)
	if r.status != 200 || string(r.body) != "{\"deleted\":0}\n" {
		t.Fatalf("cleanup by tags alone = %d %s (tags alone never delete)", r.status, r.body)
	}
	r = do(t, ts.URL, "POST", "/sessions/cleanup", "")
	if r.status != 200 || string(r.body) != "{\"deleted\":0}\n" {
		t.Fatalf("cleanup with no body = %d %s", r.status, r.body)
	}
	for _, bad := range []string{`{"olderThanDays":-1}`, `{"olderThanDays":"1"}`, `{"tags":{"a":1}}`, `not json`, `[1]`, `{} {}`} {
		if r := do(t, ts.URL, "POST", "/sessions/cleanup", bad); r.status != 400 || r.errorCode(t) != core.CodeBadRequest || contains(r.body, "Go ") || contains(r.body, "server.") {
			t.Fatalf("cleanup %s = %d %s (want 400 BAD_REQUEST naming no Go type)", bad, r.status, r.body)
		}
	}
	f.later(time.Hour) // sessions must be strictly older than the cutoff
	r = do(t, ts.URL, "POST", "/sessions/cleanup", `{"olderThanDays":0.00000001,"tags":{"user":"42"}}`)
	if r.status != 200 || string(r.body) != "{\"deleted\":2}\n" {
		t.Fatalf("cleanup = %d %s", r.status, r.body)
	}
	if got := ids(do(t, ts.URL, "GET", "/sessions", "")); len(got) != 1 || got[0] != "s3" {
		t.Fatalf("after cleanup = %v", got)
	}

	for range 2 { // deleting a missing session is not an error
		if r := do(t, ts.URL, "DELETE", "/sessions/s3", ""); r.status != 200 || string(r.body) != "{\"ok\":true}\n" {
			t.Fatalf("DELETE = %d %s", r.status, r.body)
		}
	}
	if got := ids(do(t, ts.URL, "GET", "/sessions", "")); len(got) != 0 {
		t.Fatalf("after delete = %v", got)
	}
	if r := do(t, ts.URL, "PUT", "/sessions/s1", ""); r.status != 405 || r.errorCode(t) != server.CodeMethodNotAllowed {
		t.Fatalf("PUT = %d %s", r.status, r.body)
	}
	if r := do(t, ts.URL, "GET", "/nowhere", ""); r.status != 404 || r.errorCode(t) != core.CodeNotFound {
		t.Fatalf("unknown path = %d %s", r.status, r.body)
	}
}

func TestLoopRoutes(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ctx := context.Background()
	loops := []core.LoopRecord{
		{ID: "l1", AgentID: "writer", SessionID: "s1", RunID: "r1", Status: core.LoopRunning, StartedAt: 1},
		{ID: "l2", AgentID: "analyst", SessionID: "s1", RunID: "r2", Status: core.LoopCompleted, StartedAt: 2},
		{ID: "l3", AgentID: "writer", SessionID: "s2", RunID: "r3", Status: core.LoopCompleted, StartedAt: 3},
	}
	for _, l := range loops {
		if err := f.store.CreateLoop(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.store.AddLoopIteration(ctx, core.LoopIteration{ID: "i1", LoopID: "l1", Index: 1, Input: json.RawMessage(`"a"`), Output: json.RawMessage(`"b"`)}); err != nil {
		t.Fatal(err)
	}
	ts := f.serve(t, server.Options{})

	cases := []struct {
		query string
		want  int
	}{
		{"", 3}, {"?session=s1", 2}, {"?agent=writer", 2}, {"?status=completed", 2},
		{"?session=s1&agent=writer&status=running", 1}, {"?agent=ghost", 0},
	}
	for _, c := range cases {
		r := do(t, ts.URL, "GET", "/loops"+c.query, "")
		var list []core.LoopRecord
		r.decode(t, &list)
		if r.status != 200 || len(list) != c.want {
			t.Fatalf("GET /loops%s = %d %s, want %d loops", c.query, r.status, r.body, c.want)
		}
	}
	if r := do(t, ts.URL, "GET", "/loops?status=paused", ""); r.status != 400 || r.errorCode(t) != core.CodeBadRequest {
		t.Fatalf("bad status = %d %s", r.status, r.body)
	}
	r := do(t, ts.URL, "GET", "/loops/l1", "")
	var d core.LoopDetail
	r.decode(t, &d)
	if r.status != 200 || d.Loop.ID != "l1" || len(d.Iterations) != 1 || d.Iterations[0].ID != "i1" {
		t.Fatalf("GET /loops/l1 = %d %s", r.status, r.body)
	}
	r = do(t, ts.URL, "GET", "/loops/l2", "")
	if r.status != 200 || !json.Valid(r.body) || !contains(r.body, `"iterations":[]`) {
		t.Fatalf("GET /loops/l2 = %d %s (iterations must be an array)", r.status, r.body)
	}
	if r := do(t, ts.URL, "GET", "/loops/ghost", ""); r.status != 404 || r.errorCode(t) != core.CodeLoopNotFound {
		t.Fatalf("GET /loops/ghost = %d %s", r.status, r.body)
	}
}

func TestTaskRoutes(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ctx := context.Background()
	for i, tr := range []core.TaskRunRecord{
		{ID: "t1", TaskID: "summarize", AgentID: "writer", SessionID: "s1", Status: core.TaskCompleted},
		{ID: "t2", TaskID: "summarize", AgentID: "analyst", SessionID: "s2", Status: core.TaskFailed},
		{ID: "t3", TaskID: "classify", AgentID: "writer", SessionID: "s1", Status: core.TaskRunning},
	} {
		tr.Input = json.RawMessage(`{}`)
		tr.CreatedAt = int64(i + 1)
		if err := f.store.CreateTaskRun(ctx, tr); err != nil {
			t.Fatal(err)
		}
	}
	ts := f.serve(t, server.Options{})
	cases := []struct {
		query string
		want  int
	}{
		{"", 3}, {"?task=summarize", 2}, {"?session=s1", 2}, {"?agent=analyst", 1},
		{"?status=running", 1}, {"?limit=2", 2}, {"?task=summarize&status=failed", 1},
	}
	for _, c := range cases {
		r := do(t, ts.URL, "GET", "/tasks"+c.query, "")
		var list []core.TaskRunRecord
		r.decode(t, &list)
		if r.status != 200 || len(list) != c.want {
			t.Fatalf("GET /tasks%s = %d %s, want %d", c.query, r.status, r.body, c.want)
		}
	}
	for _, bad := range []string{"?limit=0", "?limit=-3", "?limit=x", "?limit=1.5", "?limit=99999999999", "?status=done"} {
		if r := do(t, ts.URL, "GET", "/tasks"+bad, ""); r.status != 400 || r.errorCode(t) != core.CodeBadRequest {
			t.Fatalf("GET /tasks%s = %d %s", bad, r.status, r.body)
		}
	}
	r := do(t, ts.URL, "GET", "/tasks/t2", "")
	var tr core.TaskRunRecord
	r.decode(t, &tr)
	if r.status != 200 || tr.ID != "t2" || tr.Status != core.TaskFailed {
		t.Fatalf("GET /tasks/t2 = %d %s", r.status, r.body)
	}
	if r := do(t, ts.URL, "GET", "/tasks/ghost", ""); r.status != 404 || r.errorCode(t) != core.CodeTaskRunNotFound {
		t.Fatalf("GET /tasks/ghost = %d %s", r.status, r.body)
	}
}

// plainStore hides every optional capability of the memory store.
type plainStore struct{ core.BreadStore }

func TestTasksNotImplementedWithoutTaskRunStore(t *testing.T) {
	f := newFixture(t, fakeConfig{Store: plainStore{newFixtureStore()}})
	ts := f.serve(t, server.Options{})
	for _, p := range []string{"/tasks", "/tasks/t1", "/tasks?limit=bad"} {
		if r := do(t, ts.URL, "GET", p, ""); r.status != 501 || r.errorCode(t) != core.CodeNotImplemented {
			t.Fatalf("GET %s = %d %s", p, r.status, r.body)
		}
	}
}

func TestLoopsNotImplementedWithoutLoopStore(t *testing.T) {
	f := newFixture(t, fakeConfig{Store: plainStore{newFixtureStore()}})
	ts := f.serve(t, server.Options{})
	for _, p := range []string{"/loops", "/loops/l1"} {
		if r := do(t, ts.URL, "GET", p, ""); r.status != 501 || r.errorCode(t) != core.CodeNotImplemented {
			t.Fatalf("GET %s = %d %s", p, r.status, r.body)
		}
	}
}

// failingStore fails every list with an error whose text must not leak.
type failingStore struct{ *memory.Store }

func (failingStore) ListSessions(context.Context, core.SessionFilter) ([]core.Session, error) {
	return nil, errors.New("dial tcp 10.0.0.5:5432: password=hunter2 refused")
}

func (failingStore) ListLoops(context.Context, core.LoopFilter) ([]core.LoopRecord, error) {
	return nil, &core.BreadError{Code: core.CodeStoreUnavailable, Message: "the database cannot be reached", Context: map[string]any{"dsn": "secret"}}
}

func TestStoreFailuresAreSanitized(t *testing.T) {
	f := newFixture(t, fakeConfig{Store: failingStore{newFixtureStore()}})
	ts := f.serve(t, server.Options{})
	r := do(t, ts.URL, "GET", "/sessions", "")
	if r.status != 500 || r.errorCode(t) != core.CodeInternalError || contains(r.body, "hunter2") {
		t.Fatalf("GET /sessions = %d %s", r.status, r.body)
	}
	r = do(t, ts.URL, "GET", "/loops", "")
	if r.status != 500 || r.errorCode(t) != core.CodeStoreUnavailable || contains(r.body, "secret") {
		t.Fatalf("GET /loops = %d %s", r.status, r.body)
	}
}

func TestCancelRouteAsksStreamAuthorization(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ts := f.serve(t, server.Options{Streams: allowStreams(func(_ *core.AuthIdentity, runID string) bool { return runID != "secret" })})
	if r := do(t, ts.URL, "POST", "/runs/secret/cancel", ""); r.status != 403 || string(r.body) != server.ForbiddenBody {
		t.Fatalf("cancel denied run = %d %s", r.status, r.body)
	}
	if r := do(t, ts.URL, "POST", "/runs/other/cancel", ""); r.status != 404 {
		t.Fatalf("cancel allowed run = %d %s", r.status, r.body)
	}
}

type stubCanceller struct{ ids []string }

func (s *stubCanceller) Cancel(_ context.Context, runID string) (bool, error) {
	s.ids = append(s.ids, runID)
	if runID == "broken" {
		return false, errors.New("bus down")
	}
	return true, nil
}

func TestCancelRouteUsesTheCanceller(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	c := &stubCanceller{}
	ts := f.serve(t, server.Options{Canceller: c})
	if r := do(t, ts.URL, "POST", "/runs/elsewhere/cancel", ""); r.status != 200 {
		t.Fatalf("cancel = %d %s", r.status, r.body)
	}
	if r := do(t, ts.URL, "POST", "/runs/broken/cancel", ""); r.status != 500 || r.errorCode(t) != core.CodeInternalError {
		t.Fatalf("cancel broken = %d %s", r.status, r.body)
	}
	if len(c.ids) != 2 || c.ids[0] != "elsewhere" {
		t.Fatalf("canceller saw %v", c.ids)
	}
}

func TestNewValidates(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	if _, err := server.New(f.inst, server.Options{MaxBodyBytes: -1}); !errors.Is(err, &core.BreadError{Code: core.CodeInvalidConfig}) {
		t.Fatalf("negative MaxBodyBytes = %v", err)
	}
	if _, err := server.New(nil, server.Options{}); err == nil {
		t.Fatal("New(nil) succeeded")
	}
	for _, port := range []int{-1, 65536, 99999} {
		if _, err := server.New(f.inst, server.Options{Port: port}); !errors.Is(err, &core.BreadError{Code: core.CodeInvalidConfig}) {
			t.Errorf("Port %d = %v, want INVALID_CONFIG", port, err)
		}
	}
	// A misspelt public action is refused by name rather than leaving its
	// route silently behind auth.
	_, err := server.New(f.inst, server.Options{Public: []string{"health.lve"}})
	if !errors.Is(err, &core.BreadError{Code: core.CodeInvalidConfig}) || !strings.Contains(err.Error(), `"health.lve"`) {
		t.Fatalf("unknown public action = %v", err)
	}
}

func TestHTTPServerTimeouts(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	srv, err := server.New(f.inst, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if hs := srv.HTTPServer(nil); hs.ReadHeaderTimeout != server.DefaultReadHeaderTimeout || hs.IdleTimeout != server.DefaultIdleTimeout {
		t.Errorf("defaults: read header %v, idle %v", hs.ReadHeaderTimeout, hs.IdleTimeout)
	}
	srv, err = server.New(f.inst, server.Options{ReadHeaderTimeout: time.Second, IdleTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if hs := srv.HTTPServer(nil); hs.ReadHeaderTimeout != time.Second || hs.IdleTimeout != 2*time.Second {
		t.Errorf("set: read header %v, idle %v", hs.ReadHeaderTimeout, hs.IdleTimeout)
	}
}

func TestActionsListsEveryRoute(t *testing.T) {
	f := newFixture(t, fakeConfig{Plugins: []core.BreadPlugin{routesPlugin{
		"extra", func(r core.Router) {
			r.Handle("extra.read", http.MethodGet, "/extra", http.NotFoundHandler())
		}}}})
	srv, err := server.New(f.inst, server.Options{Public: []string{"extra.read", core.ActionHealthLive}})
	if err != nil {
		t.Fatal(err)
	}
	got := srv.Actions()
	for _, want := range append(core.HTTPActions(), "extra.read") {
		if want == core.ActionRunStreamToken || want == core.ActionRunFileRead {
			continue // mounted by the stream-token and blob plugins, absent here
		}
		if !slices.Contains(got, want) {
			t.Errorf("Actions() = %v, missing %q", got, want)
		}
	}
	if !slices.IsSorted(got) {
		t.Errorf("Actions() not sorted: %v", got)
	}
}

func TestPanickingRouteIs500(t *testing.T) {
	f := newFixture(t, fakeConfig{Plugins: []core.BreadPlugin{routesPlugin{
		"boom", func(r core.Router) {
			r.Handle("boom", "GET", "/boom", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("kaboom") }))
		},
	}}})
	ts := f.serve(t, server.Options{})
	if r := do(t, ts.URL, "GET", "/boom", ""); r.status != 500 || r.errorCode(t) != core.CodeInternalError {
		t.Fatalf("panic = %d %s", r.status, r.body)
	}
}

type routesPlugin struct {
	name   string
	routes func(core.Router)
}

func (p routesPlugin) Name() string         { return p.name }
func (p routesPlugin) Routes(r core.Router) { p.routes(r) }

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }
