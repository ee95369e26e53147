package enginetest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/transports/httpstream"
)

// asker is an agent that asks a human to confirm, with an answer schema.
var asker = &core.Agent{ID: "asker", Model: core.ModelRef{Provider: "scripted", Model: "m"}, HumanTools: []core.HumanToolDef{
	{Name: "confirm", Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)},
}}

// suspended runs asker to its human:required and returns the checkpoint.
func suspended(t *testing.T, e *env) string {
	t.Helper()
	fs := e.open(t, "POST", "/agents/asker/run", `{"input":"go"}`, "Accept", "application/x-ndjson").rest()
	hr, ok := fs[len(fs)-1].Crumb.(*core.HumanRequired)
	if !ok {
		t.Fatalf("the run did not suspend: %s", types(fs))
	}
	return hr.CheckpointID
}

// resumable checks that a refused resume left its checkpoint resumable: a
// valid answer continues the run to its end.
func resumable(t *testing.T, e *env, checkpoint string) {
	t.Helper()
	fs := e.open(t, "POST", "/resume/"+checkpoint, `{"response":{"ok":true}}`, "Accept", "application/x-ndjson").rest()
	if len(fs) == 0 || fs[len(fs)-1].Crumb.CrumbType() != core.TypeAgentRunEnd {
		t.Fatalf("a valid answer after the refusal: %s", types(fs))
	}
}

// refusal is one row of the README's table of refusals: a request, and the
// status and code it gets. A 200 row's code is the stream's terminal
// error: NDJSON's agent:error frame, SSE's error event.
type refusal struct {
	name string
	cfg  engine.Config
	opts httpstream.Options
	// turns script the model (nil: one short answer).
	turns []modeltest.Turn
	// request returns the request to refuse, after whatever it needs
	// (a run holding a session, a suspended run); ctx is what after gets.
	request func(t *testing.T, e *env) (method, path, body, ctx string)
	status  int
	code    string
	after   func(t *testing.T, e *env, ctx string)
}

func simple(method, path, body string) func(*testing.T, *env) (string, string, string, string) {
	return func(*testing.T, *env) (string, string, string, string) { return method, path, body, "" }
}

// refusals are every refusal of the four streaming routes, in the order of
// the README's table.
func refusals() []refusal {
	pipelines := map[string][]core.PipelineStep{"one": {{Type: core.StepAgent, AgentID: "writer"}}}
	strict := &core.Agent{ID: "strict", Model: core.ModelRef{Provider: "scripted", Model: "m"}, InputSchema: json.RawMessage(`{"type":"string"}`)}
	return []refusal{
		{name: "unknown agent", request: simple("POST", "/agents/ghost/run", `{"input":"hi"}`), status: 200, code: core.CodeAgentNotFound},
		{name: "agent that is not an entrypoint", cfg: engine.Config{Entrypoints: []string{"writer"}, Agents: []*core.Agent{{ID: "internal", Model: core.ModelRef{Provider: "scripted", Model: "m"}}}},
			request: simple("POST", "/agents/internal/run", `{"input":"hi"}`), status: 200, code: core.CodeAgentNotFound},
		{name: "unknown pipeline", request: simple("POST", "/pipelines/ghost/run", `{"input":"hi"}`), status: 200, code: core.CodePipelineNotFound},
		{name: "body that is not JSON", request: simple("POST", "/agents/writer/run", `{"input":`), status: 200, code: core.CodeBadRequest},
		{name: "body of the wrong shape", request: simple("POST", "/pipelines/one/run", `[]`), cfg: engine.Config{Pipelines: pipelines}, status: 200, code: core.CodeBadRequest},
		{name: "input that fails the agent's schema", cfg: engine.Config{Agents: []*core.Agent{strict}},
			request: simple("POST", "/agents/strict/run", `{"input":{"topic":"bread"}}`), status: 200, code: core.CodeValidationError},
		{name: "invalid session id", request: simple("POST", "/agents/writer/run", `{"input":"hi","session":{"id":"../x"}}`), status: 200, code: core.CodeValidationError},
		{name: "webhook on a streamed run", request: simple("POST", "/agents/writer/run", `{"input":"hi","webhook":"https://example.com/hook"}`), status: 200, code: core.CodeValidationError},
		{name: "webhook on a streamed pipeline", cfg: engine.Config{Pipelines: pipelines}, request: simple("POST", "/pipelines/one/run", `{"webhook":"https://example.com/hook"}`), status: 200, code: core.CodeValidationError},
		{name: "busy session", turns: []modeltest.Turn{modeltest.Block(make(chan struct{}), "working ")},
			request: func(t *testing.T, e *env) (string, string, string, string) {
				holder := e.open(t, "POST", "/agents/writer/run", `{"input":"hi","session":{"id":"s1"}}`, "Accept", "application/x-ndjson")
				if f, ok := holder.next(); !ok || f.Crumb.CrumbType() != core.TypeAgentRunStart {
					t.Fatal("the holding run did not start")
				}
				return "POST", "/agents/writer/run", `{"input":"again","session":{"id":"s1"}}`, ""
			}, status: 200, code: core.CodeSessionBusy},
		{name: "resume body that is not JSON", cfg: engine.Config{Agents: []*core.Agent{asker}},
			turns: []modeltest.Turn{modeltest.ToolCall("human_confirm", map[string]bool{"ok": true}), modeltest.Text("done")},
			request: func(t *testing.T, e *env) (string, string, string, string) {
				cp := suspended(t, e)
				return "POST", "/resume/" + cp, `{"response":`, cp
			}, status: 200, code: core.CodeBadRequest, after: resumable},
		{name: "resume without an answer", cfg: engine.Config{Agents: []*core.Agent{asker}},
			turns: []modeltest.Turn{modeltest.ToolCall("human_confirm", map[string]bool{"ok": true}), modeltest.Text("done")},
			request: func(t *testing.T, e *env) (string, string, string, string) {
				cp := suspended(t, e)
				return "POST", "/resume/" + cp, `{}`, cp
			}, status: 200, code: core.CodeValidationError, after: resumable},
		{name: "resume answer that fails its schema", cfg: engine.Config{Agents: []*core.Agent{asker}},
			turns: []modeltest.Turn{modeltest.ToolCall("human_confirm", map[string]bool{"ok": true}), modeltest.Text("done")},
			request: func(t *testing.T, e *env) (string, string, string, string) {
				cp := suspended(t, e)
				return "POST", "/resume/" + cp, `{"response":{"ok":"true"}}`, cp
			}, status: 200, code: core.CodeValidationError, after: resumable},
		{name: "unknown checkpoint", request: simple("POST", "/resume/cp-ghost", `{"response":true}`), status: 200, code: core.CodeCheckpointNotFound},
		{name: "checkpoint another resume holds", cfg: engine.Config{Agents: []*core.Agent{asker}},
			turns: []modeltest.Turn{modeltest.ToolCall("human_confirm", map[string]bool{"ok": true}), modeltest.Block(make(chan struct{}), "thinking ")},
			request: func(t *testing.T, e *env) (string, string, string, string) {
				cp := suspended(t, e)
				first := e.open(t, "POST", "/resume/"+cp, `{"response":{"ok":true}}`, "Accept", "application/x-ndjson")
				if f, ok := first.next(); !ok || f.Crumb.CrumbType() != core.TypeHumanResumed {
					t.Fatal("the first resume did not start")
				}
				return "POST", "/resume/" + cp, `{"response":{"ok":true}}`, cp
			}, status: 200, code: core.CodeCheckpointClaimed},
		{name: "instance stopping", request: func(t *testing.T, e *env) (string, string, string, string) {
			_ = e.inst.Stop(t.Context())
			return "POST", "/agents/writer/run", `{"input":"hi"}`, ""
		}, status: 503, code: core.CodeInstanceStopping},
		{name: "background run of an unknown agent", request: simple("POST", "/agents/ghost/run", `{"background":true}`), status: 404, code: core.CodeAgentNotFound},
		{name: "background run of an unknown pipeline", request: simple("POST", "/pipelines/ghost/run", `{"background":true}`), status: 404, code: core.CodePipelineNotFound},
		{name: "background run on a busy session", turns: []modeltest.Turn{modeltest.Block(make(chan struct{}), "working ")},
			request: func(t *testing.T, e *env) (string, string, string, string) {
				holder := e.open(t, "POST", "/agents/writer/run", `{"input":"hi","session":{"id":"s1"}}`, "Accept", "application/x-ndjson")
				if f, ok := holder.next(); !ok || f.Crumb.CrumbType() != core.TypeAgentRunStart {
					t.Fatal("the holding run did not start")
				}
				return "POST", "/agents/writer/run", `{"input":"again","background":true,"session":{"id":"s1"}}`, ""
			}, status: 409, code: core.CodeSessionBusy},
		{name: "background webhook without a secret", request: simple("POST", "/agents/writer/run", `{"background":true,"webhook":"https://example.com/hook"}`), status: 400, code: core.CodeValidationError},
		{name: "background run with a bad body", request: func(*testing.T, *env) (string, string, string, string) {
			return "POST", "/agents/writer/run?prefer", `{"input":`, ""
		}, status: 400, code: core.CodeBadRequest},
		{name: "passive stream after= not a number", request: simple("GET", "/runs/r-1/stream?after=x", ""), status: 400, code: core.CodeBadRequest},
		{name: "passive stream AuthorizeStream refuses", opts: httpstream.Options{AuthorizeStream: func(context.Context, *core.AuthIdentity, string) bool { return false }},
			request: simple("GET", "/runs/r-1/stream", ""), status: 403, code: "Forbidden"},
		{name: "passive stream of an unknown run", request: simple("GET", "/runs/r-ghost/stream", ""), status: 404, code: core.CodeRunNotFound},
	}
}

// TestRefusals holds each row of the README's refusal table, in both
// formats: a refusal that concerns a run is a 200 stream ending in the
// format's terminal error (and a refused resume leaves its checkpoint
// resumable); only what has no stream answers with a status.
func TestRefusals(t *testing.T) {
	for _, c := range refusals() {
		for _, accept := range []string{"application/x-ndjson", "text/event-stream"} {
			t.Run(c.name+"/"+accept, func(t *testing.T) {
				e := newEnv(t, setup{cfg: c.cfg, opts: c.opts, turns: c.turns})
				method, path, body, ctx := c.request(t, e)
				hdr := []string{"Accept", accept}
				if path == "/agents/writer/run?prefer" {
					path, hdr = "/agents/writer/run", append(hdr, "Prefer", "respond-async")
				}
				s := e.open(t, method, path, body, hdr...)
				if s.res.StatusCode != c.status {
					raw, _ := io.ReadAll(s.res.Body)
					t.Fatalf("status %d, want %d: %s", s.res.StatusCode, c.status, raw)
				}
				if c.status != http.StatusOK {
					var b struct{ Error core.ClientError }
					raw, _ := io.ReadAll(s.res.Body)
					if c.status == http.StatusForbidden {
						if string(raw) != `{"error":"Forbidden"}` {
							t.Fatalf("403 body %q, want the seed's", raw)
						}
						return
					}
					if err := json.Unmarshal(raw, &b); err != nil || b.Error.Code != c.code || s.res.Header.Get("Content-Type") != "application/json" {
						t.Fatalf("body %s, want the JSON error %s", raw, c.code)
					}
					if c.status == http.StatusServiceUnavailable && s.res.Header.Get("Retry-After") != httpstream.RetryAfter {
						t.Fatalf("503 without Retry-After")
					}
					return
				}
				if ct := s.res.Header.Get("Content-Type"); ct != accept {
					t.Fatalf("Content-Type %q", ct)
				}
				fs := s.rest()
				if len(fs) == 0 || errorCode(fs[len(fs)-1].Crumb) != c.code {
					t.Fatalf("the stream ends with %s, want the error %s", types(fs), c.code)
				}
				if accept == "text/event-stream" && (len(s.errEvents) != 1 || s.errEvents[0].Code != c.code) {
					t.Fatalf("SSE error events %+v, want one %s", s.errEvents, c.code)
				}
				if c.after != nil {
					c.after(t, e, ctx)
				}
			})
		}
	}
}
