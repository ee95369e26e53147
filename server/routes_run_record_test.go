package server_test

import (
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server"
)

func TestReadRunNeedsARunStore(t *testing.T) {
	f := newFixture(t, fakeConfig{Store: plainStore{newFixtureStore()}})
	ts := f.serve(t, server.Options{})
	if r := do(t, ts.URL, "GET", "/runs/x", ""); r.status != 501 || r.errorCode(t) != core.CodeNotImplemented {
		t.Fatalf("GET /runs/x = %d %s", r.status, r.body)
	}
}

// TestOnlyEntrypointsAreListed: agents internal to compositions are neither
// listed nor readable over HTTP when entrypoints are configured.
func TestOnlyEntrypointsAreListed(t *testing.T) {
	f := newFixture(t, fakeConfig{Entrypoints: []string{"writer"}})
	ts := f.serve(t, server.Options{})
	var list []struct{ ID string }
	r := do(t, ts.URL, "GET", "/agents", "")
	r.decode(t, &list)
	if len(list) != 1 || list[0].ID != "writer" {
		t.Fatalf("GET /agents = %s", r.body)
	}
	if r := do(t, ts.URL, "GET", "/agents/analyst", ""); r.status != 404 || r.errorCode(t) != core.CodeAgentNotFound {
		t.Fatalf("GET /agents/analyst = %d %s", r.status, r.body)
	}
	if r := do(t, ts.URL, "GET", "/agents/writer", ""); r.status != 200 {
		t.Fatalf("GET /agents/writer = %d", r.status)
	}
}
