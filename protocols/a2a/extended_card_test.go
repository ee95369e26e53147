package a2a_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	a2ap "github.com/breadai/bread/protocols/a2a"
	"github.com/breadai/bread/server"
)

// TestExtendedCard: with Options.ExtendedCard the public card keeps the
// agent's skills and schemas back and says an extended card exists; an
// identified caller's extended card (v0.3 agent/getAuthenticatedExtendedCard,
// v1.0 GetExtendedAgentCard and GET /extendedAgentCard) has them; a caller
// without an identity gets HTTP 401 on every binding.
func TestExtendedCard(t *testing.T) {
	agent := func() *core.Agent {
		a := scripted("assistant", modeltest.Text("hi"))
		a.Description = "Answers questions."
		a.InputSchema = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)
		a.Skills = []core.Skill{{ID: "search", Name: "Search", Description: "Finds things."}}
		return a
	}
	auth := &server.Auth{Strategies: []core.BreadAuthStrategy{headerAuth{}}, Authorize: func(context.Context, *core.AuthIdentity, string, map[string]string) bool { return true }}
	as := func(user string) http.Header { return http.Header{"X-User": {user}} }
	for _, c := range []struct {
		version, card, rpcMethod, extendedFlag string
		rest                                   bool
	}{
		{a2ap.SpecV03, "/.well-known/agent-card.json", "agent/getAuthenticatedExtendedCard", "supportsAuthenticatedExtendedCard", false},
		{a2ap.SpecV1, "/.well-known/agent-card-v1.json", "GetExtendedAgentCard", "capabilities.extendedAgentCard", true},
	} {
		t.Run(c.version, func(t *testing.T) {
			opts := a2ap.Options{SpecVersion: c.version, URL: "/a2a", CardPath: c.card, ExtendedCard: true}
			s := newStack(t, setup{agents: []*core.Agent{agent()}, auth: auth, opts: opts})
			n := &normalizer{ids: map[string]string{}}
			_, pub := n.restCall(t, http.MethodGet, s.url+c.card, nil, as("ann"))
			pb, _ := json.Marshal(pub)
			if strings.Contains(string(pb), "search") || strings.Contains(string(pb), "inputSchema") || !strings.Contains(string(pb), `"skills":[{`) {
				t.Fatalf("the public card shows the skills or schemas: %s", pb)
			}
			if flag := lookup(pub, c.extendedFlag); flag != true {
				t.Fatalf("public card: %s = %v", c.extendedFlag, flag)
			}
			env := n.call(t, s.url+"/a2a", c.rpcMethod, map[string]any{}, as("ann"))
			ext := result(t, env)
			eb, _ := json.Marshal(ext)
			if !strings.Contains(string(eb), `"search"`) || !strings.Contains(string(eb), "inputSchema") || !strings.Contains(string(eb), `base\u003e/a2a"`) {
				t.Fatalf("the extended card lacks the skills, schemas or url: %s", eb)
			}
			if c.rest {
				code, got := n.restCall(t, http.MethodGet, s.url+"/a2a/extendedAgentCard", nil, as("ann"))
				if code != http.StatusOK || !jsonEqual(got, ext) {
					t.Fatalf("GET /extendedAgentCard = %d %v, want %v", code, got, ext)
				}
			}
			// Without an identity: a server without auth.
			anon := newStack(t, setup{agents: []*core.Agent{agent()}, opts: opts})
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": c.rpcMethod, "params": map[string]any{}})
			res, err := http.Post(anon.url+"/a2a", "application/json", strings.NewReader(string(body)))
			if err != nil {
				t.Fatal(err)
			}
			var out map[string]any
			_ = json.NewDecoder(res.Body).Decode(&out)
			res.Body.Close()
			if res.StatusCode != http.StatusUnauthorized || res.Header.Get("WWW-Authenticate") == "" || out["error"] == nil || out["result"] != nil {
				t.Fatalf("anonymous %s: %d %v", c.rpcMethod, res.StatusCode, out)
			}
			if c.rest {
				code, got := n.restCall(t, http.MethodGet, anon.url+"/a2a/extendedAgentCard", nil, nil)
				if code != http.StatusUnauthorized || lookup(got, "error.status") != "UNAUTHENTICATED" {
					t.Fatalf("anonymous GET /extendedAgentCard = %d %v", code, got)
				}
			}
		})
	}
}

// lookup follows a dotted path through decoded JSON objects.
func lookup(v any, path string) any {
	for k := range strings.SplitSeq(path, ".") {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
