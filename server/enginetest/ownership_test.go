package enginetest_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/server"
	"github.com/breadai/bread/transports/httpstream"
)

// ownedServer serves a fixture behind headerAuth (X-Identity) with the
// ownership policy (admin: subject "root", resume checked) and stream
// tokens of ttl, wired the way the CLI wires them.
func ownedServer(t *testing.T, ttl time.Duration, turns ...modeltest.Turn) (*fixture, string) {
	t.Helper()
	return ownedServerAt(t, ttl, time.Now, turns...)
}

// ownedServerAt is ownedServer whose stream tokens tell the time by now.
func ownedServerAt(t *testing.T, ttl time.Duration, now func() time.Time, turns ...modeltest.Turn) (*fixture, string) {
	t.Helper()
	store := memory.New()
	tokens, err := server.NewStreamTokens(nil, ttl)
	if err != nil {
		t.Fatal(err)
	}
	tokens = tokens.WithClock(now)
	// One Storage for the engine and the policy, as the CLI shares it: the
	// session rule Sessions turns on is that Storage's.
	shared := core.NewStorage(store)
	own := &server.Ownership{Store: shared, Admin: func(id *core.AuthIdentity) bool { return id.Subject == "root" }, Resume: true, Sessions: true}
	f := newFixture(t, engine.Config{Store: shared, Plugins: []core.BreadPlugin{tokens.Plugin(shared, own.AuthorizeStream)}}, turns...)
	f.store = store
	allow := func(context.Context, *core.AuthIdentity, string, map[string]string) bool { return true }
	ts := f.serve(t, server.Options{
		Auth:    &server.Auth{Strategies: []core.BreadAuthStrategy{tokens.Strategy(), headerAuth{}}, Authorize: tokens.Authorize(own.Authorize(allow))},
		Streams: httpstream.Options{AuthorizeStream: own.AuthorizeStream, StartHeaders: tokens.StartHeaders(own.AuthorizeStream)},
	})
	return f, ts.URL
}

// startRun runs writer as who and returns the run's id.
func startRun(t *testing.T, base, who string) string {
	t.Helper()
	res := do(t, base, http.MethodPost, "/agents/writer/run", `{"input":"hi"}`, "X-Identity", who, "Accept", "application/x-ndjson")
	if res.status != http.StatusOK || !strings.HasPrefix(res.header.Get(server.StreamTokenHeader), "bst1.") {
		t.Fatalf("run as %s: %d %s, token header %q", who, res.status, res.body, res.header.Get(server.StreamTokenHeader))
	}
	line, _, _ := strings.Cut(string(res.body), "\n")
	var f struct {
		RunID string `json:"runId"`
	}
	if err := json.Unmarshal([]byte(line), &f); err != nil || f.RunID == "" {
		t.Fatalf("first frame %q: %v", line, err)
	}
	return f.RunID
}

func TestOwnershipGuardsRunsByTheirStarter(t *testing.T) {
	f, base := ownedServer(t, time.Minute, modeltest.Text("one"), modeltest.Text("two"))
	run := startRun(t, base, "alice")
	rec, err := f.store.GetRun(context.Background(), run)
	if err != nil || rec.StartedBy != core.OwnerKey(&core.AuthIdentity{Subject: "alice"}) {
		t.Fatalf("the run record: %+v, %v", rec, err)
	}
	for _, c := range []struct {
		method, path, who string
		want              int
	}{
		{http.MethodGet, "/runs/" + run + "/stream", "bob", http.StatusForbidden},
		{http.MethodGet, "/runs/" + run, "bob", http.StatusForbidden},
		{http.MethodPost, "/runs/" + run + "/cancel", "bob", http.StatusForbidden},
		{http.MethodPost, "/runs/" + run + "/stream-token", "bob", http.StatusForbidden},
		{http.MethodGet, "/runs/" + run + "/stream", "alice", http.StatusOK},
		{http.MethodGet, "/runs/" + run, "alice", http.StatusOK},
		{http.MethodGet, "/runs/" + run + "/stream", "root", http.StatusOK},
		{http.MethodPost, "/runs/no-such-run/stream-token", "alice", http.StatusNotFound},
	} {
		if got := do(t, base, c.method, c.path, "", "X-Identity", c.who); got.status != c.want {
			t.Errorf("%s %s as %s: %d %s, want %d", c.method, c.path, c.who, got.status, got.body, c.want)
		}
	}

	// A run no identified caller started is the admins' only.
	if err := f.store.PutRun(context.Background(), core.RunRecord{ID: "run-anon", AgentID: "writer", Status: core.RunCompleted, CreatedAt: 1, UpdatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	if got := do(t, base, http.MethodGet, "/runs/run-anon", "", "X-Identity", "alice"); got.status != http.StatusForbidden {
		t.Errorf("alice reads a run without a starter: %d", got.status)
	}
	if got := do(t, base, http.MethodGet, "/runs/run-anon", "", "X-Identity", "root"); got.status != http.StatusOK {
		t.Errorf("root reads a run without a starter: %d %s", got.status, got.body)
	}

	// Sessions: its creator's and the admins'; to anyone else it is
	// missing, as an unknown one is.
	sessionID := rec.SessionID
	empty, err := f.store.CreateSession(context.Background(), core.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, path, who string
		want              int
	}{
		{http.MethodGet, "/sessions/" + sessionID, "bob", http.StatusNotFound},
		{http.MethodGet, "/sessions/" + sessionID + "/messages", "bob", http.StatusNotFound},
		{http.MethodDelete, "/sessions/" + sessionID, "bob", http.StatusNotFound},
		{http.MethodGet, "/sessions/" + sessionID, "alice", http.StatusOK},
		{http.MethodGet, "/sessions/" + sessionID + "/messages", "alice", http.StatusOK},
		{http.MethodGet, "/sessions/" + sessionID, "root", http.StatusOK},
		{http.MethodGet, "/sessions/" + empty.ID, "alice", http.StatusNotFound},
		{http.MethodGet, "/sessions/" + empty.ID, "root", http.StatusOK},
		{http.MethodGet, "/sessions/no-such-session", "bob", http.StatusNotFound},
		{http.MethodDelete, "/sessions/no-such-session", "bob", http.StatusNotFound},
	} {
		if got := do(t, base, c.method, c.path, "", "X-Identity", c.who); got.status != c.want {
			t.Errorf("%s %s as %s: %d %s, want %d", c.method, c.path, c.who, got.status, got.body, c.want)
		}
	}

	// Resume: the checkpoint's run's starter, or an admin; to another
	// caller the checkpoint of a session not its own is missing.
	sess, err := f.store.CreateSession(context.Background(), core.NewSession{Owner: core.OwnerKey(&core.AuthIdentity{Subject: "alice"})})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.PutRun(context.Background(), core.RunRecord{ID: "run-cp", AgentID: "writer", SessionID: sess.ID, Status: core.RunSuspended,
		StartedBy: core.OwnerKey(&core.AuthIdentity{Subject: "alice"}), CheckpointID: "cp-1", CreatedAt: 1, UpdatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	if err := f.store.SaveCheckpoint(context.Background(), core.CheckpointRecord{ID: "cp-1", AgentID: "writer", RunID: "run-cp", SessionID: sess.ID, ToolName: "human_approve", ToolCallID: "c1", CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	if got := do(t, base, http.MethodPost, "/resume/cp-1", `{"response":{"approved":true}}`, "X-Identity", "bob"); got.status != http.StatusOK || !strings.Contains(string(got.body), `"code":"CHECKPOINT_NOT_FOUND"`) {
		t.Errorf("bob resumes alice's run: %d %s, want the stream of an unknown checkpoint", got.status, got.body)
	}
	got := do(t, base, http.MethodPost, "/resume/cp-1", `{"response":{"approved":true}}`, "X-Identity", "alice")
	if got.status != http.StatusOK || !strings.HasPrefix(got.header.Get(server.StreamTokenHeader), "bst1.") {
		t.Errorf("alice resumes her run: %d, token header %q", got.status, got.header.Get(server.StreamTokenHeader))
	}
}

func TestStreamTokens(t *testing.T) {
	var ahead atomic.Int64 // how far the tokens' clock is ahead of the real time
	_, base := ownedServerAt(t, time.Minute, func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }, modeltest.Text("one"), modeltest.Text("two"))
	runX, runY := startRun(t, base, "alice"), startRun(t, base, "alice")
	res := do(t, base, http.MethodPost, "/runs/"+runX+"/stream-token", "", "X-Identity", "alice")
	var v struct {
		RunID     string `json:"runId"`
		Token     string `json:"token"`
		ExpiresAt int64  `json:"expiresAt"`
	}
	res.decode(t, &v)
	if res.status != http.StatusOK || v.RunID != runX || v.Token == "" || v.ExpiresAt <= time.Now().UnixMilli() {
		t.Fatalf("minting: %d %s", res.status, res.body)
	}
	q := "?" + url.Values{"access_token": {v.Token}}.Encode()
	if got := do(t, base, http.MethodGet, "/runs/"+runX+"/stream"+q, "", "Accept", "text/event-stream"); got.status != http.StatusOK || !strings.Contains(string(got.body), "agent:run:end") {
		t.Errorf("the token tails its run: %d %s", got.status, got.body)
	}
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, "/runs/" + runY + "/stream" + q},  // another run
		{http.MethodGet, "/runs/" + runX + q},              // another route of the run
		{http.MethodPost, "/runs/" + runX + "/cancel" + q}, // another action
		{http.MethodPost, "/runs/" + runX + "/stream-token" + q},
		{http.MethodGet, "/agents" + q},
	} {
		if got := do(t, base, c.method, c.path, ""); got.status != http.StatusUnauthorized {
			t.Errorf("%s %s with the token: %d %s, want 401", c.method, c.path, got.status, got.body)
		}
	}
	// Bob may not even use his own credential with alice's run through a
	// token: the token authenticates as alice only for runX.
	if got := do(t, base, http.MethodGet, "/runs/"+runX+"/stream?access_token=bst1.forged.sig", ""); got.status != http.StatusUnauthorized {
		t.Errorf("a forged token: %d", got.status)
	}
	ahead.Store(int64(time.Minute)) // the token's minute has passed
	if got := do(t, base, http.MethodGet, "/runs/"+runX+"/stream"+q, ""); got.status != http.StatusUnauthorized {
		t.Errorf("an expired token: %d %s", got.status, got.body)
	}
}

func TestStreamTokenKeys(t *testing.T) {
	if _, err := server.NewStreamTokens([]byte("short"), 0); err == nil {
		t.Error("a 5-byte key was accepted")
	}
	a, _ := server.NewStreamTokens([]byte(strings.Repeat("a", 32)), time.Minute)
	b, _ := server.NewStreamTokens([]byte(strings.Repeat("b", 32)), time.Minute)
	tok, _ := a.Mint(&core.AuthIdentity{Subject: "alice"}, "run-1")
	req, _ := http.NewRequest(http.MethodGet, "/runs/run-1/stream?after=3&access_token="+url.QueryEscape(tok), nil)
	if _, err := b.Strategy().Authenticate(req); !server.IsRejection(err) {
		t.Errorf("another key's token: %v", err)
	}
	req, _ = http.NewRequest(http.MethodGet, "/runs/run-1/stream?after=3&access_token="+url.QueryEscape(tok), nil)
	id, err := a.Strategy().Authenticate(req)
	if err != nil || id.Subject != "alice" {
		t.Fatalf("own token: %+v, %v", id, err)
	}
	if req.URL.RawQuery != "after=3" || strings.Contains(req.RequestURI, "access_token") {
		t.Errorf("the token stays in the request: %q %q", req.URL.RawQuery, req.RequestURI)
	}
}

// TestSchedulesShowTheirSessionToItsOwner: under the session ownership
// rule, GET /schedules lists every schedule but names a schedule's session
// only to the identity its ticks run as (runAs) and to admins; a schedule
// without runAs runs as the operator, and its session is the admins'
// (issue 29). Without the rule (auth off) every session is listed.
func TestSchedulesShowTheirSessionToItsOwner(t *testing.T) {
	shared := core.NewStorage(memory.New())
	own := &server.Ownership{Store: shared, Admin: func(id *core.AuthIdentity) bool { return id.Subject == "root" }, Sessions: true}
	f := newFixture(t, engine.Config{Store: shared, Schedules: []engine.Schedule{
		{Name: "alice-report", Spec: "@every 1h", AgentID: "writer", Session: "report-of-alice", RunAs: &core.AuthIdentity{Subject: "alice"}},
		{Name: "bob-report", Spec: "@every 1h", AgentID: "writer", Session: "report-of-bob", RunAs: &core.AuthIdentity{Subject: "bob"}},
		{Name: "ops", Spec: "@every 1h", AgentID: "writer", Session: "operators"},
	}})
	allow := func(context.Context, *core.AuthIdentity, string, map[string]string) bool { return true }
	ts := f.serve(t, server.Options{Auth: &server.Auth{Strategies: []core.BreadAuthStrategy{headerAuth{}}, Authorize: own.Authorize(allow)}})
	sessions := func(who string) map[string]string {
		t.Helper()
		r := do(t, ts.URL, http.MethodGet, "/schedules", "", "X-Identity", who)
		if r.status != http.StatusOK {
			t.Fatalf("GET /schedules as %s: %d %s", who, r.status, r.body)
		}
		var list []core.ScheduleInfo
		r.decode(t, &list)
		out := map[string]string{}
		for _, s := range list {
			out[s.Name] = s.Session
		}
		return out
	}
	for who, want := range map[string]map[string]string{
		"alice": {"alice-report": "report-of-alice", "bob-report": "", "ops": ""},
		"bob":   {"alice-report": "", "bob-report": "report-of-bob", "ops": ""},
		"root":  {"alice-report": "report-of-alice", "bob-report": "report-of-bob", "ops": "operators"},
	} {
		if got := sessions(who); !maps.Equal(got, want) {
			t.Errorf("GET /schedules as %s: sessions %v, want %v", who, got, want)
		}
	}
	open := do(t, newFixture(t, engine.Config{Schedules: []engine.Schedule{{Name: "ops", Spec: "@every 1h", AgentID: "writer", Session: "operators"}}}).serve(t, server.Options{}).URL, http.MethodGet, "/schedules", "")
	if !strings.Contains(string(open.body), `"session":"operators"`) {
		t.Errorf("GET /schedules without auth: %d %s, want the session listed", open.status, open.body)
	}
}
