package server_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server"
)

// evalsOf answers every agent's evals with n cases, the first passed ones
// passing.
func evalsOf(passed, n int) server.EvalFunc {
	return func(_ context.Context, agentID string) ([]core.EvalResult, error) {
		out := make([]core.EvalResult, n)
		for i := range out {
			out[i] = core.EvalResult{Suite: "agents/" + agentID + "/evals/a.eval.yaml", Type: "functional", Case: "case " + strconv.Itoa(i), Passed: i < passed, Output: "out"}
			if !out[i].Passed {
				out[i].Problems = []string{"wrong"}
			}
		}
		return out, nil
	}
}

type evalAnswer struct {
	ID         string            `json:"id"`
	AgentID    string            `json:"agentId"`
	StartedBy  string            `json:"startedBy"`
	CreatedAt  int64             `json:"createdAt"`
	Passed     int               `json:"passed"`
	Total      int               `json:"total"`
	Results    []core.EvalResult `json:"results"`
	DurationMs *int64            `json:"durationMs"`
}

type evalPageAnswer struct {
	AgentID string       `json:"agentId"`
	Evals   []evalAnswer `json:"evals"`
	Next    string       `json:"next"`
}

// TestEvalHistoryRoutes: every POST /agents/{id}/evals is kept, GET
// /agents/{id}/evals pages through them newest first without their cases,
// and GET /agents/{id}/evals/{evalId} gives one back with its cases.
func TestEvalHistoryRoutes(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ts := f.serve(t, server.Options{Evals: evalsOf(2, 3)})
	var posted []evalAnswer
	for range 3 {
		var a evalAnswer
		r := do(t, ts.URL, "POST", "/agents/writer/evals", "")
		r.decode(t, &a)
		if r.status != 200 || a.ID == "" || a.Passed != 2 || a.Total != 3 || len(a.Results) != 3 || a.CreatedAt == 0 || a.DurationMs == nil {
			t.Fatalf("POST /agents/writer/evals = %d %s", r.status, r.body)
		}
		posted = append(posted, a)
	}
	var other evalAnswer
	do(t, ts.URL, "POST", "/agents/analyst/evals", "").decode(t, &other)

	// Page by page, one at a time: every writer run once, none of the
	// analyst's, no cases.
	seen := map[string]bool{}
	after := ""
	for page := 0; ; page++ {
		path := "/agents/writer/evals?limit=1"
		if after != "" {
			path += "&after=" + after
		}
		var p evalPageAnswer
		r := do(t, ts.URL, "GET", path, "")
		r.decode(t, &p)
		if r.status != 200 || p.AgentID != "writer" || len(p.Evals) != 1 {
			t.Fatalf("page %d: GET %s = %d %s", page, path, r.status, r.body)
		}
		e := p.Evals[0]
		if seen[e.ID] || e.Results != nil || e.Total != 3 || e.Passed != 2 || e.StartedBy != "" {
			t.Fatalf("page %d: %s", page, r.body)
		}
		seen[e.ID] = true
		if p.Next == "" {
			break
		}
		after = p.Next
		if page > 3 {
			t.Fatal("the pages do not end")
		}
	}
	for _, a := range posted {
		if !seen[a.ID] {
			t.Errorf("run %s posted but never listed (listed %v)", a.ID, seen)
		}
	}
	var all evalPageAnswer
	do(t, ts.URL, "GET", "/agents/writer/evals", "").decode(t, &all)
	if len(all.Evals) != 3 || all.Next != "" {
		t.Fatalf("the whole history: %+v", all)
	}
	for i := 1; i < len(all.Evals); i++ {
		if all.Evals[i].CreatedAt > all.Evals[i-1].CreatedAt {
			t.Errorf("not newest first: %+v", all.Evals)
		}
	}

	var one evalAnswer
	r := do(t, ts.URL, "GET", "/agents/writer/evals/"+posted[1].ID, "")
	r.decode(t, &one)
	if r.status != 200 || one.ID != posted[1].ID || len(one.Results) != 3 || one.Results[2].Problems[0] != "wrong" || one.Results[0].Output != "out" {
		t.Fatalf("GET one = %d %s", r.status, r.body)
	}

	refusals := []struct {
		path   string
		status int
		code   string
	}{
		{"/agents/writer/evals/" + other.ID, 404, core.CodeEvalRunNotFound}, // the analyst's run, asked of the writer
		{"/agents/writer/evals/nope", 404, core.CodeEvalRunNotFound},
		{"/agents/ghost/evals", 404, core.CodeAgentNotFound},
		{"/agents/ghost/evals/" + posted[0].ID, 404, core.CodeAgentNotFound},
		{"/agents/writer/evals?limit=0", 400, core.CodeBadRequest},
		{"/agents/writer/evals?limit=1001", 400, core.CodeBadRequest},
		{"/agents/writer/evals?limit=x", 400, core.CodeBadRequest},
		{"/agents/writer/evals?after=!!", 400, core.CodeBadRequest},
		{"/agents/writer/evals?after=e30", 400, core.CodeBadRequest}, // base64url of {} : no id
	}
	for _, c := range refusals {
		r := do(t, ts.URL, "GET", c.path, "")
		if r.status != c.status || r.errorCode(t) != c.code {
			t.Errorf("GET %s = %d %s, want %d %s", c.path, r.status, r.body, c.status, c.code)
		}
	}
}

// TestEvalHistoryOwnership: under the session ownership rule an eval run
// is its starter's; to another identity it is missing, and the listing
// shows each caller its own.
func TestEvalHistoryOwnership(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	f.inst.Storage().OwnSessions(core.SessionOwners{Admin: func(id *core.AuthIdentity) bool { return id.Subject == "root" }})
	ts := f.serve(t, server.Options{Evals: evalsOf(1, 1), Auth: &server.Auth{Strategies: []core.BreadAuthStrategy{headerAuth{}},
		Authorize: func(context.Context, *core.AuthIdentity, string, map[string]string) bool { return true }}})
	var mine evalAnswer
	do(t, ts.URL, "POST", "/agents/writer/evals", "", "X-Identity", "alice").decode(t, &mine)
	if mine.ID == "" || mine.StartedBy != "" {
		t.Fatalf("alice's POST: %+v", mine)
	}
	count := func(who string) int {
		var p evalPageAnswer
		r := do(t, ts.URL, "GET", "/agents/writer/evals", "", "X-Identity", who)
		r.decode(t, &p)
		if r.status != 200 {
			t.Fatalf("%s lists: %d %s", who, r.status, r.body)
		}
		return len(p.Evals)
	}
	for who, want := range map[string]int{"alice": 1, "bob": 0, "root": 1} {
		if got := count(who); got != want {
			t.Errorf("%s lists %d runs, want %d", who, got, want)
		}
	}
	for who, want := range map[string]int{"alice": 200, "bob": 404, "root": 200} {
		r := do(t, ts.URL, "GET", "/agents/writer/evals/"+mine.ID, "", "X-Identity", who)
		if r.status != want || (want == 404 && r.errorCode(t) != core.CodeEvalRunNotFound) {
			t.Errorf("%s reads alice's run: %d %s, want %d", who, r.status, r.body, want)
		}
	}
}

// TestEvalHistoryWithoutAStoreForIt: a store without core.EvalRunStore
// runs evals all the same, answers them without an id, and its history
// route is 501.
func TestEvalHistoryWithoutAStoreForIt(t *testing.T) {
	f := newFixture(t, fakeConfig{Store: sessionsOnly{newFixtureStore()}})
	ts := f.serve(t, server.Options{Evals: evalsOf(1, 2)})
	var a evalAnswer
	r := do(t, ts.URL, "POST", "/agents/writer/evals", "")
	r.decode(t, &a)
	if r.status != 200 || a.ID != "" || a.Total != 2 {
		t.Fatalf("POST = %d %s", r.status, r.body)
	}
	for _, path := range []string{"/agents/writer/evals", "/agents/writer/evals/x"} {
		if r := do(t, ts.URL, "GET", path, ""); r.status != 501 || r.errorCode(t) != core.CodeNotImplemented {
			t.Errorf("GET %s = %d %s", path, r.status, r.body)
		}
	}
}

// sessionsOnly is a store with no optional capability.
type sessionsOnly struct{ core.BreadStore }

func TestEvalHistoryActions(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	srv, err := server.New(f.inst, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, a := range srv.Actions() {
		have[a] = true
	}
	for _, want := range []string{server.ActionEvalList, server.ActionEvalRead} {
		if !have[want] {
			t.Errorf("Actions() lacks %q", want)
		}
	}
}
