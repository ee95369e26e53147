package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server"
)

// The routes the console reads: agents with their description and input
// schema, pipelines, a session's history, an agent's evals.

func TestAgentsShowDescriptionAndInputSchema(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string"}},"required":["topic"]}`)
	f := newFixture(t, fakeConfig{Agents: []*core.Agent{{ID: "briefer", Description: "Writes a brief.",
		Model: core.ModelRef{Provider: "scripted", Model: "m1"}, InputSchema: schema,
		HumanTools: []core.HumanToolDef{{Name: "choose_title", Description: "Ask for a title.", Prompt: "Which title?", Schema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}}}`)}}}}})
	ts := f.serve(t, server.Options{})
	var list []struct {
		ID          string          `json:"id"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	r := do(t, ts.URL, "GET", "/agents", "")
	r.decode(t, &list)
	if len(list) != 3 || list[1].ID != "briefer" || list[1].Description != "Writes a brief." || string(list[1].InputSchema) != string(schema) {
		t.Fatalf("GET /agents = %s", r.body)
	}
	if list[0].InputSchema != nil || list[0].Description != "" {
		t.Fatalf("an agent without schema or description shows none: %s", r.body)
	}
	r = do(t, ts.URL, "GET", "/agents/briefer", "")
	if !strings.Contains(string(r.body), `"humanTools":[{"name":"human_choose_title","description":"Ask for a title.","prompt":"Which title?","schema":{"type":"object","properties":{"title":{"type":"string"}}}}]`) {
		t.Fatalf("human tools: %s", r.body)
	}
	if r.status != 200 || !json.Valid(r.body) || !strings.Contains(string(r.body), `"description":"Writes a brief."`) || !strings.Contains(string(r.body), `"inputSchema":{"type":"object"`) {
		t.Fatalf("GET /agents/briefer = %d %s", r.status, r.body)
	}
}

func TestPipelinesRoute(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)
	f := newFixture(t, fakeConfig{
		Agents: []*core.Agent{{ID: "asker", Model: core.ModelRef{Provider: "scripted", Model: "m1"}, InputSchema: schema}},
		Pipelines: map[string][]core.PipelineStep{
			"publish": {{Type: core.StepAgent, AgentID: "asker"}, {Type: core.StepParallel, Steps: []core.PipelineStep{
				{Type: core.StepAgent, AgentID: "writer"}, {Type: core.StepAgent, AgentID: "analyst"}}}},
			"again": {{Type: core.StepAgent, AgentID: "writer"}},
		},
	})
	ts := f.serve(t, server.Options{})
	r := do(t, ts.URL, "GET", "/pipelines", "")
	var list []struct {
		ID          string              `json:"id"`
		Description string              `json:"description"`
		Steps       []core.PipelineStep `json:"steps"`
		InputSchema json.RawMessage     `json:"inputSchema"`
	}
	r.decode(t, &list)
	if r.status != 200 || len(list) != 2 || list[0].ID != "again" || list[1].ID != "publish" {
		t.Fatalf("GET /pipelines = %d %s", r.status, r.body)
	}
	if list[1].Description != "asker → (writer ‖ analyst)" || len(list[1].Steps) != 2 || string(list[1].InputSchema) != string(schema) {
		t.Fatalf("publish = %+v", list[1])
	}
	if list[0].Description != "writer" || list[0].InputSchema != nil {
		t.Fatalf("again = %+v", list[0])
	}

	empty := newFixture(t, fakeConfig{})
	r = do(t, empty.serve(t, server.Options{}).URL, "GET", "/pipelines", "")
	if r.status != 200 || string(r.body) != "[]\n" {
		t.Fatalf("no pipelines = %d %q", r.status, r.body)
	}
}

func TestSessionMessagesRoute(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ctx := context.Background()
	if _, err := f.store.CreateSession(ctx, core.NewSession{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.CreateSession(ctx, core.NewSession{ID: "quiet"}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []core.SessionMessage{
		{Role: core.RoleUser, Content: json.RawMessage(`"hi"`)},
		{Role: core.RoleAssistant, Content: json.RawMessage(`"hello"`)},
	} {
		if err := f.store.AddMessage(ctx, "s1", m); err != nil {
			t.Fatal(err)
		}
	}
	ts := f.serve(t, server.Options{})
	r := do(t, ts.URL, "GET", "/sessions/s1/messages", "")
	var msgs []core.SessionMessage
	r.decode(t, &msgs)
	if r.status != 200 || len(msgs) != 2 || msgs[0].Role != core.RoleUser || string(msgs[1].Content) != `"hello"` || msgs[0].SessionID != "s1" {
		t.Fatalf("GET /sessions/s1/messages = %d %s", r.status, r.body)
	}
	if r := do(t, ts.URL, "GET", "/sessions/quiet/messages", ""); r.status != 200 || string(r.body) != "[]\n" {
		t.Fatalf("an empty session = %d %q", r.status, r.body)
	}
	if r := do(t, ts.URL, "GET", "/sessions/ghost/messages", ""); r.status != 404 || r.errorCode(t) != core.CodeSessionNotFound {
		t.Fatalf("a missing session = %d %s", r.status, r.body)
	}
	if r := do(t, ts.URL, "POST", "/sessions/s1/messages", ""); r.status != 405 {
		t.Fatalf("POST = %d %s", r.status, r.body)
	}
}

func TestSessionMessagesIsSessionRead(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	if _, err := f.store.CreateSession(context.Background(), core.NewSession{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	var asked []string
	ts := f.serve(t, server.Options{Auth: &server.Auth{Strategies: []core.BreadAuthStrategy{headerAuth{}},
		Authorize: func(_ context.Context, _ *core.AuthIdentity, action string, args map[string]string) bool {
			asked = append(asked, action+" "+args["id"])
			return false
		}}})
	if r := do(t, ts.URL, "GET", "/sessions/s1/messages", "", "X-Identity", "alice"); r.status != 403 {
		t.Fatalf("refused = %d %s", r.status, r.body)
	}
	if len(asked) != 1 || asked[0] != core.ActionSessionRead+" s1" {
		t.Fatalf("asked %v", asked)
	}
}

func TestEvalsRoute(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ts := f.serve(t, server.Options{})
	if r := do(t, ts.URL, "POST", "/agents/writer/evals", ""); r.status != 501 || r.errorCode(t) != core.CodeNotImplemented {
		t.Fatalf("without Evals = %d %s", r.status, r.body)
	}

	var ranFor []string
	evals := func(_ context.Context, agentID string) ([]core.EvalResult, error) {
		ranFor = append(ranFor, agentID)
		switch agentID {
		case "analyst":
			return nil, &core.BreadError{Code: server.CodeEvalsNotFound, Message: "agent \"analyst\" has no eval suite"}
		case "writer":
			return []core.EvalResult{
				{Suite: "agents/writer/evals/a.eval.yaml", Type: "functional", Case: "greets", Passed: true, Output: "hello", DurationMs: 3},
				{Suite: "agents/writer/evals/a.eval.yaml", Type: "functional", Case: "shouts", Problems: []string{`exact: got "hello", want "HELLO"`}},
			}, nil
		}
		return nil, errors.New("secret detail")
	}
	ts = f.serve(t, server.Options{Evals: evals})
	r := do(t, ts.URL, "POST", "/agents/writer/evals", "")
	var rep struct {
		AgentID string            `json:"agentId"`
		Passed  int               `json:"passed"`
		Total   int               `json:"total"`
		Results []core.EvalResult `json:"results"`
	}
	r.decode(t, &rep)
	if r.status != 200 || rep.AgentID != "writer" || rep.Passed != 1 || rep.Total != 2 || len(rep.Results) != 2 ||
		rep.Results[1].Passed || rep.Results[1].Problems[0] != `exact: got "hello", want "HELLO"` || rep.Results[0].Output != "hello" {
		t.Fatalf("POST /agents/writer/evals = %d %s", r.status, r.body)
	}
	if r := do(t, ts.URL, "POST", "/agents/analyst/evals", ""); r.status != 404 || r.errorCode(t) != server.CodeEvalsNotFound {
		t.Fatalf("no suites = %d %s", r.status, r.body)
	}
	if r := do(t, ts.URL, "POST", "/agents/ghost/evals", ""); r.status != 404 || r.errorCode(t) != core.CodeAgentNotFound {
		t.Fatalf("unknown agent = %d %s", r.status, r.body)
	}
	if len(ranFor) != 2 {
		t.Fatalf("evals ran for %v; an unknown agent runs none", ranFor)
	}
	if r := do(t, ts.URL, "DELETE", "/agents/writer/evals", ""); r.status != 405 {
		t.Fatalf("DELETE = %d", r.status)
	}
}

func TestEvalsFailureIsSanitized(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ts := f.serve(t, server.Options{Evals: func(context.Context, string) ([]core.EvalResult, error) {
		return nil, errors.New("secret detail")
	}})
	r := do(t, ts.URL, "POST", "/agents/writer/evals", "")
	if r.status != 500 || r.errorCode(t) != core.CodeInternalError || strings.Contains(string(r.body), "secret") {
		t.Fatalf("failure = %d %s", r.status, r.body)
	}
}

func TestConsoleAPIActions(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	srv, err := server.New(f.inst, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := srv.Actions()
	for _, want := range []string{server.ActionPipelineList, server.ActionAgentEval} {
		found := false
		for _, a := range got {
			found = found || a == want
		}
		if !found {
			t.Errorf("Actions() = %v, missing %q", got, want)
		}
	}
}

func TestConsoleIsServedOnlyWhenEnabled(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	off := f.serve(t, server.Options{})
	if r := do(t, off.URL, "GET", "/", ""); r.status != 404 {
		t.Fatalf("without Console, GET / = %d", r.status)
	}
	on := f.serve(t, server.Options{Console: true})
	r := do(t, on.URL, "GET", "/", "")
	if r.status != 200 || !strings.Contains(string(r.body), "bread console") || r.header.Get("Content-Security-Policy") == "" {
		t.Fatalf("with Console, GET / = %d %s", r.status, r.body)
	}
	if r := do(t, on.URL, "GET", "/console/app.js", ""); r.status != 200 {
		t.Fatalf("GET /console/app.js = %d", r.status)
	}
	if r := do(t, on.URL, "GET", "/agents", ""); r.status != 200 {
		t.Fatalf("the API beside the console = %d", r.status)
	}
	// The host guard applies as on every route.
	if r := do(t, on.URL, "GET", "/", "", "Host", "evil.example"); r.status != 403 {
		t.Fatalf("a foreign Host = %d", r.status)
	}
}

func TestConsoleAuthAppliesLikeEveryRoute(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	var asked []string
	ts := f.serve(t, server.Options{Console: true, Auth: &server.Auth{Strategies: []core.BreadAuthStrategy{headerAuth{}},
		Authorize: func(_ context.Context, id *core.AuthIdentity, action string, _ map[string]string) bool {
			asked = append(asked, action)
			return id.Subject == "alice"
		}}})
	if r := do(t, ts.URL, "GET", "/", ""); r.status != 401 {
		t.Fatalf("no credential = %d", r.status)
	}
	if r := do(t, ts.URL, "GET", "/console/app.js", "", "X-Identity", "bob"); r.status != 403 {
		t.Fatalf("bob = %d", r.status)
	}
	if r := do(t, ts.URL, "GET", "/", "", "X-Identity", "alice"); r.status != 200 {
		t.Fatalf("alice = %d", r.status)
	}
	if len(asked) != 2 || asked[0] != server.ActionConsoleRead {
		t.Fatalf("asked %v", asked)
	}
	// Listed in server.public, the page (which holds no data) is served to anyone.
	open := f.serve(t, server.Options{Console: true, Public: []string{server.ActionConsoleRead}, Auth: &server.Auth{Strategies: []core.BreadAuthStrategy{headerAuth{}},
		Authorize: func(context.Context, *core.AuthIdentity, string, map[string]string) bool { return false }}})
	if r := do(t, open.URL, "GET", "/", ""); r.status != 200 {
		t.Fatalf("public console = %d", r.status)
	}
	if r := do(t, open.URL, "GET", "/agents", ""); r.status != 401 {
		t.Fatalf("the API stays guarded = %d", r.status)
	}
}
