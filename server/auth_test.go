package server_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server"
)

// scripted is a strategy whose answer depends on one header: X-<name> set
// to "ok" authenticates as <name>, "bad" rejects, "down" fails to check;
// absent, it does not recognise the request. It counts its calls.
type scripted struct {
	name      string
	challenge string
	calls     *[]string
}

func (s scripted) Name() string { return s.name }

func (s scripted) Authenticate(r *http.Request) (*core.AuthIdentity, error) {
	*s.calls = append(*s.calls, s.name)
	switch r.Header.Get("X-" + s.name) {
	case "ok":
		return &core.AuthIdentity{Subject: s.name}, nil
	case "bad":
		return nil, &core.BreadError{Code: core.CodeUnauthorized, Message: s.name + " refused it"}
	case "down":
		return nil, errors.New(s.name + " is down")
	}
	return nil, nil
}

func (s scripted) Challenge(rejection error) string {
	if s.challenge == "" {
		return ""
	}
	if rejection != nil {
		return s.challenge + ` error="` + rejection.(*core.BreadError).Message + `"`
	}
	return s.challenge
}

// scrubbing removes X-Forwarded-User before any strategy runs.
type scrubbing struct{ scripted }

func (scrubbing) Scrub(r *http.Request) { r.Header.Del("X-Forwarded-User") }

func TestAuthComposition(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	var calls []string
	var seen []string
	authorize := func(_ context.Context, id *core.AuthIdentity, action string, _ map[string]string) bool {
		seen = append(seen, id.Subject)
		return true
	}
	strategies := []core.BreadAuthStrategy{
		scrubbing{scripted{name: "first", calls: &calls}},
		scripted{name: "second", challenge: `Bearer realm="two"`, calls: &calls},
		scripted{name: "third", challenge: `Bearer realm="three"`, calls: &calls},
		scripted{name: "fourth", challenge: `Bearer realm="two"`, calls: &calls}, // a duplicate challenge
	}
	ts := f.serve(t, server.Options{Auth: &server.Auth{Strategies: strategies, Authorize: authorize}})

	cases := []struct {
		name       string
		hdr        []string
		status     int
		calls      []string
		challenges []string
	}{
		{"the first recognises and accepts", []string{"X-first", "ok", "X-second", "bad"}, 200, []string{"first"}, nil},
		{"a pass goes to the next", []string{"X-third", "ok"}, 200, []string{"first", "second", "third"}, nil},
		{"a rejection ends the chain", []string{"X-second", "bad", "X-third", "ok"}, 401, []string{"first", "second"}, []string{`Bearer realm="two" error="second refused it"`}},
		{"a rejection without a challenge gets the default", []string{"X-first", "bad"}, 401, []string{"first"}, []string{server.DefaultChallenge}},
		{"a failure to check goes on", []string{"X-first", "down", "X-third", "ok"}, 200, []string{"first", "second", "third"}, nil},
		{"a failure then a rejection is 401", []string{"X-first", "down", "X-third", "bad"}, 401, []string{"first", "second", "third"}, []string{`Bearer realm="three" error="third refused it"`}},
		{"a failure and no identity is 500", []string{"X-second", "down"}, 500, []string{"first", "second", "third", "fourth"}, nil},
		{"nobody recognises: every challenge once", nil, 401, []string{"first", "second", "third", "fourth"}, []string{`Bearer realm="two"`, `Bearer realm="three"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls = nil
			r := do(t, ts.URL, "GET", "/agents", "", c.hdr...)
			if r.status != c.status {
				t.Fatalf("status %d %s, want %d", r.status, r.body, c.status)
			}
			if !slices.Equal(calls, c.calls) {
				t.Errorf("strategies called %v, want %v", calls, c.calls)
			}
			if got := r.header.Values("WWW-Authenticate"); !slices.Equal(got, c.challenges) {
				t.Errorf("challenges %q, want %q", got, c.challenges)
			}
			if r.status == 401 && r.errorCode(t) != core.CodeUnauthorized {
				t.Errorf("401 body %s", r.body)
			}
			if r.status == 500 && r.errorCode(t) != core.CodeInternalError {
				t.Errorf("500 body %s", r.body)
			}
		})
	}
	if !slices.Equal(seen, []string{"first", "third", "third"}) {
		t.Errorf("Authorize saw %v", seen)
	}
}

// TestAuthScrubberRunsFirst: a scrubber strips its headers even when an
// earlier strategy authenticates the request.
func TestAuthScrubberRunsFirst(t *testing.T) {
	var calls []string
	var got string
	h := server.AuthMiddleware(
		scripted{name: "jwt", calls: &calls},
		scrubbing{scripted{name: "proxy", calls: &calls}},
	)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("X-Forwarded-User")
	}))
	req, _ := http.NewRequest("GET", "/agents", nil)
	req.Header.Set("X-jwt", "ok")
	req.Header.Set("X-Forwarded-User", "root")
	h.ServeHTTP(discard{}, req)
	if got != "" || !slices.Equal(calls, []string{"jwt"}) {
		t.Fatalf("the handler saw X-Forwarded-User %q; calls %v", got, calls)
	}
}

func TestAuthPluginComposes(t *testing.T) {
	var calls []string
	f := newFixture(t, fakeConfig{Plugins: []core.BreadPlugin{server.AuthPlugin(
		scripted{name: "a", calls: &calls}, scripted{name: "b", challenge: `Bearer realm="b"`, calls: &calls},
	)}})
	ts := f.serve(t, server.Options{Auth: &server.Auth{Authorize: func(context.Context, *core.AuthIdentity, string, map[string]string) bool { return true }}})
	if r := do(t, ts.URL, "GET", "/agents", "", "X-b", "ok"); r.status != 200 {
		t.Fatalf("plugin, second strategy: %d %s", r.status, r.body)
	}
	r := do(t, ts.URL, "GET", "/agents", "", "X-a", "bad", "X-b", "ok")
	if r.status != 401 || r.header.Get("WWW-Authenticate") != server.DefaultChallenge {
		t.Fatalf("plugin, rejection: %d %v", r.status, r.header)
	}
}

type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
