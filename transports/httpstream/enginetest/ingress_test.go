package enginetest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/transports/httpstream"
)

func TestRunStreamsEveryCrumb(t *testing.T) {
	e := newEnv(t, setup{})
	s := e.open(t, "POST", "/agents/writer/run", `{"input":"hi","session":{"id":"user-42","tags":{"user":"42"}}}`)
	if ct := s.res.Header.Get("Content-Type"); s.res.StatusCode != 200 || ct != "application/x-ndjson" || s.res.Header.Get("Vary") != "Accept" {
		t.Fatalf("status %d content type %q vary %q", s.res.StatusCode, ct, s.res.Header.Get("Vary"))
	}
	fs := s.rest()
	if got := types(fs); got != "agent:run:start,text:delta,text:delta,text:delta,agent:run:end" {
		t.Fatalf("types %s", got)
	}
	if text(fs) != "Bread is good." || fs[0].Seq != 1 || fs[1].Seq != 1 || fs[4].Seq != 3 {
		t.Fatalf("text %q seqs %d %d %d", text(fs), fs[0].Seq, fs[1].Seq, fs[4].Seq)
	}
	if fs[0].Crumb.Base().SessionID != "user-42" {
		t.Fatalf("session %q", fs[0].Crumb.Base().SessionID)
	}
	sess, err := e.store.GetSession(context.Background(), "user-42")
	if err != nil || sess.Tags["user"] != "42" {
		t.Fatalf("session not created with its tags: %+v %v", sess, err)
	}
}

func TestFailuresArriveAsAgentErrorFrames(t *testing.T) {
	strict := &core.Agent{ID: "strict", Model: core.ModelRef{Provider: "scripted", Model: "m"}, InputSchema: json.RawMessage(`{"type":"string"}`)}
	e := newEnv(t, setup{cfg: engine.Config{
		Agents:    []*core.Agent{strict},
		Pipelines: map[string][]core.PipelineStep{"known": {{Type: core.StepAgent, AgentID: "writer"}}},
	}})
	cases := []struct {
		path, body, code, message string
	}{
		{"/agents/writer/run", `{"input":`, core.CodeBadRequest, "the request body is not valid JSON"},
		{"/agents/writer/run", `[1,2]`, core.CodeBadRequest, "the request body must be a JSON object, not an array"},
		{"/agents/writer/run", `{"session":{"id":5}}`, core.CodeBadRequest, "session.id must be a string, not a number"},
		{"/agents/writer/run", `{"skill":{}}`, core.CodeBadRequest, "skill must be a string, not an object"},
		{"/agents/writer/run", `{"input":"hi","session":{"id":"../../x y"}}`, core.CodeValidationError, "session id"},
		{"/agents/writer/run", `{"input":"hi","session":{"id":"` + strings.Repeat("s", 129) + `"}}`, core.CodeValidationError, "at most 128 bytes"},
		{"/agents/writer/run", `{"input":"hi","session":{"tags":{"":"x"}}}`, core.CodeValidationError, "session tag keys"},
		{"/agents/writer/run", `{"input":"hi","session":{"tags":` + manyTags(65) + `}}`, core.CodeValidationError, "at most 64 tags"},
		{"/agents/writer/run", `{"input":"hi","session":{"tags":{"k":"` + strings.Repeat("v", 1025) + `"}}}`, core.CodeValidationError, "session tag keys"},
		{"/agents/ghost/run", `{"input":"hi"}`, core.CodeAgentNotFound, "not found"},
		{"/agents/strict/run", `{"input":{"not":"a string"}}`, core.CodeValidationError, ""},
		{"/pipelines/ghost/run", `{"input":{}}`, core.CodePipelineNotFound, ""},
		{"/pipelines/known/run", `{"input":`, core.CodeBadRequest, "not valid JSON"},
		{"/resume/cp-1", `{"response":`, core.CodeBadRequest, "not valid JSON"},
	}
	for _, c := range cases {
		s := e.open(t, "POST", c.path, c.body)
		body, err := io.ReadAll(s.res.Body)
		if err != nil || s.res.StatusCode != 200 {
			t.Fatalf("%s %s: status %d err %v", c.path, c.body, s.res.StatusCode, err)
		}
		last := strings.TrimSpace(string(body))
		if i := strings.LastIndexByte(last, '\n'); i >= 0 {
			last = last[i+1:]
		}
		var f struct {
			Crumb struct {
				Type  string          `json:"type"`
				Error json.RawMessage `json:"error"`
			} `json:"crumb"`
		}
		if err := json.Unmarshal([]byte(last), &f); err != nil || f.Crumb.Type != core.TypeAgentError {
			t.Fatalf("%s %s: last frame %s", c.path, c.body, last)
		}
		var be map[string]any
		_ = json.Unmarshal(f.Crumb.Error, &be)
		if _, leak := be["context"]; leak {
			t.Fatalf("%s: error context left the server: %s", c.path, f.Crumb.Error)
		}
		if c.code != "" && be["code"] != c.code {
			t.Fatalf("%s %s: code %v, want %s", c.path, c.body, be["code"], c.code)
		}
		// The message speaks JSON, never the server's Go types.
		if msg, _ := be["message"].(string); !strings.Contains(msg, c.message) || strings.Contains(msg, "Go ") || strings.Contains(msg, "httpstream") {
			t.Fatalf("%s %s: message %q, want one containing %q and no Go type names", c.path, c.body, msg, c.message)
		}
		if c.code == "" && be["code"] == nil {
			t.Fatalf("%s: no code", c.path)
		}
	}
}

func TestToolErrorsAreClientSafe(t *testing.T) {
	leaky := core.Tool{
		Name: "leaky", Description: "fails", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage, core.ToolContext) (any, error) {
			return nil, &core.BreadError{Code: "LEAKY", Message: "failed", Context: map[string]any{"token": "s3cret"}}
		},
	}
	agent := &core.Agent{ID: "tooler", Model: core.ModelRef{Provider: "scripted", Model: "m"}, Tools: []core.Tool{leaky}}
	e := newEnv(t, setup{cfg: engine.Config{Agents: []*core.Agent{agent}}, turns: []modeltest.Turn{
		modeltest.ToolCall("tool_leaky", map[string]any{}), modeltest.Text("ok"),
	}})
	s := e.open(t, "POST", "/agents/tooler/run", `{"input":"go"}`)
	body, _ := io.ReadAll(s.res.Body)
	if !strings.Contains(string(body), `"tool:error"`) || strings.Contains(string(body), "s3cret") {
		t.Fatalf("tool error not sanitized: %s", body)
	}
}

func TestPassiveStreamReplaysAFinishedRun(t *testing.T) {
	e := newEnv(t, setup{cfg: engine.Config{CrumbFilter: func(c core.Crumb) bool { return c.CrumbType() != core.TypeReasoningDelta }}})
	id, s := e.start(t, `{"input":"hi"}`)
	s.rest()

	fs := e.open(t, "GET", "/runs/"+id+"/stream", "").rest()
	// Deltas replay as one aggregated entry (logged as seq 2), under the
	// watermark its deltas carried live.
	if types(fs) != "agent:run:start,text:delta,agent:run:end" || text(fs) != "Bread is good." {
		t.Fatalf("replay %s %q", types(fs), text(fs))
	}
	if fs[0].Seq != 1 || fs[1].Seq != 1 || fs[2].Seq != 3 || fs[1].RunID != id || fs[1].Crumb.Base().Seq != 1 {
		t.Fatalf("replay seqs %d %d %d", fs[0].Seq, fs[1].Seq, fs[2].Seq)
	}
	if got := types(e.open(t, "GET", "/runs/"+id+"/stream", "", "Last-Event-ID", "2").rest()); got != "agent:run:end" {
		t.Fatalf("after Last-Event-ID 2: %s", got)
	}
	if got := types(e.open(t, "GET", "/runs/"+id+"/stream?after=1", "").rest()); got != "text:delta,agent:run:end" {
		t.Fatalf("after=1: %s", got)
	}
	for _, bad := range []string{"?after=-1", "?after=x", "?after=1.5", "?after=%2B1"} {
		s := e.open(t, "GET", "/runs/"+id+"/stream"+bad, "")
		if s.res.StatusCode != 400 {
			t.Fatalf("%s = %d", bad, s.res.StatusCode)
		}
	}
	if s := e.open(t, "GET", "/runs/"+id+"/stream", "", "Last-Event-ID", "nope"); s.res.StatusCode != 400 {
		t.Fatalf("bad Last-Event-ID = %d", s.res.StatusCode)
	}
}

func TestPassiveStreamAppliesTheCrumbFilterToReplay(t *testing.T) {
	e := newEnv(t, setup{cfg: engine.Config{CrumbFilter: func(c core.Crumb) bool { return c.CrumbType() != core.TypeTextDelta }}})
	id, s := e.start(t, `{"input":"hi"}`)
	s.rest()
	waitLogged(t, e.store, id, func(le core.CrumbLogEntry) bool { return le.Type == core.TypeAgentRunEnd })
	if got := types(e.open(t, "GET", "/runs/"+id+"/stream", "").rest()); got != "agent:run:start,agent:run:end" {
		t.Fatalf("filtered replay %s", got)
	}
}

// slowText is a run long enough to join and leave while it runs.
func slowText(n int) (modeltest.Turn, string) {
	chunks := make([]string, n)
	for i := range chunks {
		chunks[i] = "w" + strconv.Itoa(i) + " "
	}
	return modeltest.Slow(modeltest.Text(chunks...), 3*time.Millisecond), strings.Join(chunks, "")
}

func TestPassiveStreamCatchUpThenLiveWithReconnects(t *testing.T) {
	turn, full := slowText(120)
	// Small delta windows so the log holds several aggregated entries.
	e := newEnv(t, setup{turns: []modeltest.Turn{turn}, cfg: engine.Config{CrumbLog: engine.CrumbLogOptions{MaxBufferBytes: 64}}})
	id, run := e.start(t, `{"input":"hi"}`)
	defer run.close()

	// A watcher joins mid-run and drops twice; each reconnect sends the
	// last seq it saw.
	var got []core.Frame
	last := int64(0)
	for round := 0; ; round++ {
		hdr := []string{}
		if last > 0 {
			hdr = []string{"Last-Event-ID", strconv.FormatInt(last, 10)}
		}
		s := e.open(t, "GET", "/runs/"+id+"/stream", "", hdr...)
		n := 0
		done := false
		for {
			f, ok := s.next()
			if !ok {
				done = true
				break
			}
			got = append(got, f)
			last = max(last, f.Seq)
			if n++; round < 2 && n == 25 {
				break
			}
		}
		s.close()
		if done {
			break
		}
	}
	if types(got[len(got)-1:]) != core.TypeAgentRunEnd {
		t.Fatalf("stream did not end at the terminal crumb: %s", types(got))
	}
	checkAtLeastOnce(t, got, full)
}

func TestPassiveStreamJoinsBeforeTheLogCatchesUp(t *testing.T) {
	turn, full := slowText(60)
	e := newEnv(t, setup{turns: []modeltest.Turn{turn}})
	id, run := e.start(t, `{"input":"hi"}`)
	defer run.close()
	got := e.open(t, "GET", "/runs/"+id+"/stream", "").rest()
	checkAtLeastOnce(t, got, full)
}

// plainStore hides the memory store's crumb log.
type plainStore struct{ core.BreadStore }

func TestPassiveStreamLiveOnlyWithoutACrumbLog(t *testing.T) {
	turn, full := slowText(40)
	e := newEnv(t, setup{turns: []modeltest.Turn{turn}, cfg: engine.Config{Store: plainStore{memory.New()}}})
	id, run := e.start(t, `{"input":"hi"}`)
	defer run.close()
	got := e.open(t, "GET", "/runs/"+id+"/stream", "").rest()
	if types(got[len(got)-1:]) != core.TypeAgentRunEnd {
		t.Fatalf("live-only stream did not reach the end: %s", types(got))
	}
	// Joined late with no log: the transport's own replay fills in.
	checkAtLeastOnce(t, got, full)
}

// sink is a transport with nothing to subscribe to.
type sink struct{}

func (sink) Capability() core.Capability               { return core.Sink }
func (sink) Publish(context.Context, core.Frame) error { return nil }

func TestPassiveStreamReplaysOnlyWithASinkTransport(t *testing.T) {
	reached := make(chan struct{})
	e := newEnv(t, setup{bus: sink{}, turns: []modeltest.Turn{modeltest.Block(reached, "partial")}})
	id, run := e.start(t, `{"input":"hi"}`)
	defer run.close()
	<-reached
	waitLogged(t, e.store, id, func(le core.CrumbLogEntry) bool { return le.Type == core.TypeAgentRunStart })
	// The run is still blocked, yet the stream closes after the replay.
	got := e.open(t, "GET", "/runs/"+id+"/stream", "").rest()
	if types(got) != core.TypeAgentRunStart {
		t.Fatalf("sink replay %s", types(got))
	}
}

func TestPassiveStreamHeartbeats(t *testing.T) {
	reached := make(chan struct{})
	e := newEnv(t, setup{opts: httpstream.Options{Heartbeat: 10 * time.Millisecond}, turns: []modeltest.Turn{modeltest.Block(reached)}})
	id, run := e.start(t, `{"input":"hi"}`)
	defer run.close()
	<-reached
	s := e.open(t, "GET", "/runs/"+id+"/stream", "")
	if f, ok := s.next(); !ok || f.Crumb.CrumbType() != core.TypeAgentRunStart {
		t.Fatal("no replay")
	}
	for s.beat < 3 {
		if !s.sc.Scan() {
			t.Fatal("stream ended while the run was idle")
		}
		if len(s.sc.Bytes()) == 0 {
			s.beat++
		}
	}
}

func TestAuthorizeStream(t *testing.T) {
	var seen []string
	e := newEnv(t, setup{
		middleware: []func(http.Handler) http.Handler{identity},
		opts: httpstream.Options{AuthorizeStream: func(_ context.Context, id *core.AuthIdentity, runID string) bool {
			seen = append(seen, id.Subject+" "+runID)
			return id.Subject == "alice"
		}},
	})
	s := e.open(t, "POST", "/agents/writer/run", `{"input":"hi"}`, "X-Identity", "alice")
	fs := s.rest()
	id := fs[0].RunID

	denied := e.open(t, "GET", "/runs/"+id+"/stream", "", "X-Identity", "bob")
	body, _ := io.ReadAll(denied.res.Body)
	if denied.res.StatusCode != 403 || string(body) != `{"error":"Forbidden"}` {
		t.Fatalf("bob = %d %s", denied.res.StatusCode, body)
	}
	if got := types(e.open(t, "GET", "/runs/"+id+"/stream", "", "X-Identity", "alice").rest()); !strings.HasSuffix(got, core.TypeAgentRunEnd) {
		t.Fatalf("alice = %s", got)
	}
	if len(seen) != 2 || seen[0] != "bob "+id {
		t.Fatalf("AuthorizeStream saw %v", seen)
	}
	if !e.ingress.AuthorizeStream(context.Background(), &core.AuthIdentity{Subject: "alice"}, id) || e.ingress.AuthorizeStream(context.Background(), &core.AuthIdentity{Subject: "bob"}, id) {
		t.Fatal("Ingress.AuthorizeStream (the server's cancel route asks it) disagrees with the option")
	}
}

func TestClientDisconnectCancelsTheRun(t *testing.T) {
	reached := make(chan struct{})
	e := newEnv(t, setup{turns: []modeltest.Turn{modeltest.Block(reached, "half")}})
	id, s := e.start(t, `{"input":"hi"}`)
	<-reached
	s.close()
	le := waitLogged(t, e.store, id, func(le core.CrumbLogEntry) bool { return le.Type == core.TypeAgentError })
	if code := errorCode(le.Crumb); code != core.CodeRunCancelled {
		t.Fatalf("run ended with %s, want RUN_CANCELLED", code)
	}
}

func TestResumeAndPipelineRoutes(t *testing.T) {
	e := newEnv(t, setup{cfg: engine.Config{Pipelines: map[string][]core.PipelineStep{"one": {{Type: core.StepAgent, AgentID: "writer"}}}}})
	fs := e.open(t, "POST", "/pipelines/one/run", `{"input":"hi"}`).rest()
	if got := types(fs); !strings.HasPrefix(got, core.TypePipelineStepStart) || !strings.Contains(got, core.TypeAgentRunEnd) || !strings.HasSuffix(got, core.TypePipelineStepEnd) {
		t.Fatalf("pipeline stream %s", got)
	}
	fs = e.open(t, "POST", "/resume/ghost", `{"response":{"approved":true}}`).rest()
	if len(fs) != 1 || errorCode(fs[0].Crumb) != core.CodeCheckpointNotFound {
		t.Fatalf("resume of an unknown checkpoint: %s %s", types(fs), errorCode(fs[len(fs)-1].Crumb))
	}
}

func TestPassiveStreamStaysOpenAcrossHumanRequired(t *testing.T) {
	agent := &core.Agent{ID: "asker", Model: core.ModelRef{Provider: "scripted", Model: "m"},
		HumanTools: []core.HumanToolDef{core.HumanTool("confirm", json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`))}}
	e := newEnv(t, setup{
		opts:  httpstream.Options{Heartbeat: 10 * time.Millisecond},
		cfg:   engine.Config{Agents: []*core.Agent{agent}},
		turns: []modeltest.Turn{modeltest.ToolCall("human_confirm", map[string]any{"ok": true}), modeltest.Text("confirmed")},
	})
	run := e.open(t, "POST", "/agents/asker/run", `{"input":"go"}`).rest()
	last := run[len(run)-1]
	hr, ok := last.Crumb.(*core.HumanRequired)
	if !ok {
		t.Fatalf("run did not suspend: %s", types(run))
	}
	watch := e.open(t, "GET", "/runs/"+last.RunID+"/stream", "")
	for {
		f, ok := watch.next()
		if !ok {
			t.Fatal("passive stream closed at human:required")
		}
		if f.Crumb.CrumbType() == core.TypeHumanRequired {
			break
		}
	}
	for watch.beat < 2 { // still open: heartbeats keep coming
		if !watch.sc.Scan() {
			t.Fatal("passive stream closed while suspended")
		}
		if len(watch.sc.Bytes()) == 0 {
			watch.beat++
		}
	}
	resumed := e.open(t, "POST", "/resume/"+hr.CheckpointID, `{"response":{"ok":true}}`).rest()
	if !strings.HasSuffix(types(resumed), core.TypeAgentRunEnd) {
		t.Fatalf("resume stream %s", types(resumed))
	}
	rest := watch.rest()
	if !strings.HasSuffix(types(rest), core.TypeAgentRunEnd) || text(rest) != "confirmed" {
		t.Fatalf("passive stream after resume: %s %q", types(rest), text(rest))
	}
}

func TestPassiveStreamWithNeitherLogNorSubscriberIsNotConfigured(t *testing.T) {
	var logs bytes.Buffer
	e := newEnv(t, setup{bus: sink{}, cfg: engine.Config{Store: plainStore{memory.New()}},
		opts: httpstream.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}})
	for _, want := range []string{"the store keeps no crumb log", "the bus cannot subscribe"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("Mount logged %q, want %q", logs.String(), want)
		}
	}
	for _, accept := range []string{"", "text/event-stream"} {
		s := e.open(t, "GET", "/runs/r-1/stream", "", "Accept", accept)
		body, _ := io.ReadAll(s.res.Body)
		if s.res.StatusCode != http.StatusNotImplemented || !strings.Contains(string(body), core.CodeTransportNotConfigured) {
			t.Fatalf("Accept %q: %d %s", accept, s.res.StatusCode, body)
		}
	}
	// Runs still stream: only the passive tail needs a log or a bus.
	if fs := e.open(t, "POST", "/agents/writer/run", `{"input":"hi"}`).rest(); types(fs[len(fs)-1:]) != core.TypeAgentRunEnd {
		t.Fatalf("run %s", types(fs))
	}
}

// A router that caps bodies with http.MaxBytesReader (as http.MaxBytesHandler
// does) turns an oversized body into BODY_TOO_LARGE in the stream; the
// server refuses such bodies with 413 before the route, see server's tests.
func TestBodyOverARoutersCapIsBodyTooLarge(t *testing.T) {
	e := newEnv(t, setup{middleware: []func(http.Handler) http.Handler{func(h http.Handler) http.Handler { return http.MaxBytesHandler(h, 64) }}})
	big := `{"input":"` + strings.Repeat("x", 100) + `"}`
	for _, accept := range []string{"", "text/event-stream"} {
		// An io.Reader of unknown length: the body goes chunked, so only the
		// cap notices.
		req, err := http.NewRequest("POST", e.ts.URL+"/agents/writer/run", io.MultiReader(strings.NewReader(big)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", accept)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(body), `"code":"BODY_TOO_LARGE"`) {
			t.Fatalf("Accept %q: %d %s", accept, res.StatusCode, body)
		}
	}
	if fs := e.open(t, "POST", "/agents/writer/run", `{"input":"hi"}`).rest(); types(fs[len(fs)-1:]) != core.TypeAgentRunEnd {
		t.Fatalf("a body under the cap runs: %s", types(fs))
	}
}

func TestARunWithoutInputGetsAnEmptyObject(t *testing.T) {
	e := newEnv(t, setup{})
	for _, body := range []string{"", `{}`, `{"input":null}`} {
		fs := e.open(t, "POST", "/agents/writer/run", body).rest()
		start, ok := fs[0].Crumb.(*core.AgentRunStart)
		if !ok || mustJSON(start.Input) != `{}` {
			t.Fatalf("body %q: first crumb %s with input %s", body, fs[0].Crumb.CrumbType(), mustJSON(fs[0].Crumb))
		}
	}
}

func TestStartHeadersSeeTheRunID(t *testing.T) {
	var seen []string
	e := newEnv(t, setup{
		middleware: []func(http.Handler) http.Handler{identity},
		cfg:        engine.Config{Pipelines: map[string][]core.PipelineStep{"one": {{Type: core.StepAgent, AgentID: "writer"}}}},
		turns:      []modeltest.Turn{modeltest.Text("one"), modeltest.Text("two")},
		opts: httpstream.Options{StartHeaders: func(r *http.Request, runID string, h http.Header) {
			seen = append(seen, core.IdentityFrom(r.Context()).Subject+" "+runID)
			h.Set("X-Run", runID)
		}},
	})
	for _, path := range []string{"/agents/writer/run", "/pipelines/one/run"} {
		s := e.open(t, "POST", path, `{"input":"hi"}`, "X-Identity", "alice")
		fs := s.rest()
		if got := s.res.Header.Get("X-Run"); got == "" || got != fs[0].RunID {
			t.Errorf("%s: X-Run %q, first frame's run %q", path, got, fs[0].RunID)
		}
	}
	if len(seen) != 2 || !strings.HasPrefix(seen[0], "alice ") {
		t.Errorf("StartHeaders saw %v", seen)
	}
	// A request refused before any run has none.
	s := e.open(t, "POST", "/agents/writer/run", `{`, "X-Identity", "alice")
	s.rest()
	if got := s.res.Header.Get("X-Run"); got != "" {
		t.Errorf("a bad body's response has X-Run %q", got)
	}
}

// manyTags is a JSON object of n distinct session tags.
func manyTags(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"k%d":"v"`, i)
	}
	return "{" + strings.Join(parts, ",") + "}"
}
