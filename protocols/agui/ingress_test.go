package agui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/core/stream"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/protocols/agui"
	"github.com/breadai/bread/server"
	"github.com/breadai/bread/stores/teststores"
	"github.com/breadai/bread/typed"
)

type quietBus struct{ core.BreadBus }

func (quietBus) Mount(core.Router, core.Runtime) {}

type stack struct {
	in  *engine.Instance
	url string
}

type setup struct {
	store  core.BreadStore // nil: a memory store
	opts   agui.Options
	agents []*core.Agent
	tasks  []*core.Task
	auth   *server.Auth
}

// eachStore runs f on the memory store, SQLite and PostgreSQL: an answer
// to an interrupt reads its checkpoint back, a thread's next turn its
// session, from the store.
func eachStore(t *testing.T, f func(t *testing.T, open func(testing.TB) core.BreadStore)) {
	teststores.Each(t, func(t *testing.T, s teststores.Store) { f(t, s.Open) })
}

func scripted(id string, turns ...modeltest.Turn) *core.Agent {
	return &core.Agent{ID: id, Model: core.ModelRef{Provider: "own", Model: id}, Providers: modeltest.New(turns...).Registry("own")}
}

func newStack(t *testing.T, s setup) *stack {
	t.Helper()
	if s.opts.Agent == "" {
		s.opts.Agent = "assistant"
	}
	p, err := agui.New(s.opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.store == nil {
		s.store = memory.New()
	}
	in, err := engine.New(engine.Config{Store: s.store, Bus: quietBus{stream.New(stream.Options{})}, Agents: s.agents, Tasks: s.tasks, Plugins: []core.BreadPlugin{p}})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	srv, err := server.New(in, server.Options{Auth: s.auth})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return &stack{in: in, url: hs.URL}
}

// post sends a RunAgentInput over a real socket and reads the SSE events.
// postRaw posts body with header and returns the status and body as sent.
func (s *stack) postRaw(t *testing.T, body string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.url+agui.DefaultPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

func (s *stack) post(t *testing.T, body string, header http.Header) (int, []map[string]any, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.url+agui.DefaultPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		var e struct {
			Error core.ClientError `json:"error"`
		}
		_ = json.NewDecoder(res.Body).Decode(&e)
		return res.StatusCode, nil, e.Error.Code
	}
	var evs []map[string]any
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, ":") { // blank, or a keep-alive comment
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("not an SSE data line: %q", line)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(data), &v); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		evs = append(evs, v)
	}
	if err := verify(evs); err != nil {
		t.Errorf("not a valid AG-UI sequence: %v\n%v", err, evs)
	}
	return res.StatusCode, evs, ""
}

func runInput(thread, text string) string {
	b, _ := json.Marshal(map[string]any{"threadId": thread, "runId": "client-run", "state": nil,
		"messages": []any{map[string]any{"id": "m1", "role": "user", "content": text}}, "tools": []any{}, "context": []any{}, "forwardedProps": nil})
	return string(b)
}

func resumeInput(thread, interrupt, status string, payload any) string {
	entry := map[string]any{"interruptId": interrupt, "status": status}
	if payload != nil {
		entry["payload"] = payload
	}
	b, _ := json.Marshal(map[string]any{"threadId": thread, "runId": "client-run-2", "messages": []any{}, "resume": []any{entry}})
	return string(b)
}

func typesOf(evs []map[string]any) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i], _ = e["type"].(string)
		if n, ok := e["stepName"].(string); ok {
			out[i] += ":" + n
		}
	}
	return out
}

func wantTypes(t *testing.T, evs []map[string]any, want ...string) {
	t.Helper()
	got := typesOf(evs)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("events\n got %v\nwant %v", got, want)
	}
}

func find(evs []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, e := range evs {
		if e["type"] == typ {
			out = append(out, e)
		}
	}
	return out
}

type addArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

func addTool() core.Tool {
	return typed.DefineTool("add", "Add two numbers.", func(_ context.Context, a addArgs, _ core.ToolContext) (map[string]int, error) {
		return map[string]int{"sum": a.A + a.B}, nil
	})
}

func failTool() core.Tool {
	return typed.DefineTool("fetch", "Fetch.", func(context.Context, struct{}, core.ToolContext) (string, error) {
		return "", &core.BreadError{Code: core.CodeToolError, Message: "offline"}
	})
}

func TestRunText(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		model := modeltest.New(modeltest.Text("Hel", "lo"), modeltest.Text("Again"))
		a := &core.Agent{ID: "assistant", Model: core.ModelRef{Provider: "own", Model: "m"}, Providers: model.Registry("own")}
		s := newStack(t, setup{store: open(t), agents: []*core.Agent{a}})
		status, evs, _ := s.post(t, runInput("thread-1", "hi"), nil)
		if status != http.StatusOK {
			t.Fatalf("status %d", status)
		}
		wantTypes(t, evs, "RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "MESSAGES_SNAPSHOT", "RUN_FINISHED")
		if evs[0]["threadId"] != "thread-1" || evs[6]["threadId"] != "thread-1" || evs[6]["result"] != "Hello" {
			t.Errorf("run events %v / %v", evs[0], evs[6])
		}
		// The run ends with the thread as stored, so the client can
		// reconcile its list (the store's message ids).
		if got := shapeOf(t, evs[5]["messages"]); strings.Join(got, "|") != "user:hi|assistant:Hello" {
			t.Errorf("MESSAGES_SNAPSHOT at the end %q", got)
		}
		// threadId is the bread session: a second turn lands in the same
		// one, whose history the store gives back.
		if _, err := s.in.Storage().GetSession(t.Context(), "thread-1"); err != nil {
			t.Fatalf("session thread-1: %v", err)
		}
		if status, evs, _ := s.post(t, runInput("thread-1", "and now?"), nil); status != http.StatusOK || evs[len(evs)-1]["result"] != "Again" {
			t.Fatalf("second turn: %d %v", status, evs)
		}
		reqs := model.Requests()
		history, _ := json.Marshal(reqs[len(reqs)-1].Messages)
		for _, want := range []string{"hi", "Hello", "and now?"} {
			if !strings.Contains(string(history), want) {
				t.Errorf("the second turn's history lacks %q: %s", want, history)
			}
		}
	})
}

func TestRunToolsWithStreamedArguments(t *testing.T) {
	a := scripted("assistant",
		modeltest.StreamedToolCall("c1", "tool_add", `{"a":2,`, `"b":3}`),
		modeltest.ToolCall("tool_fetch", map[string]any{}),
		modeltest.Text("It is 5"))
	a.Tools = []core.Tool{addTool(), failTool()}
	s := newStack(t, setup{agents: []*core.Agent{a}})
	_, evs, _ := s.post(t, runInput("t", "add"), nil)
	wantTypes(t, evs, "RUN_STARTED",
		"TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
		"TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
		"TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "MESSAGES_SNAPSHOT", "RUN_FINISHED")
	args := find(evs, "TOOL_CALL_ARGS")
	if args[0]["delta"] != `{"a":2,` || args[1]["delta"] != `"b":3}` || args[0]["toolCallId"] != "c1" {
		t.Errorf("streamed deltas %v", args)
	}
	if start := find(evs, "TOOL_CALL_START")[0]; start["toolCallName"] != "tool_add" {
		t.Errorf("start %v", start)
	}
	results := find(evs, "TOOL_CALL_RESULT")
	if results[0]["content"] != `{"sum":5}` || results[0]["toolCallId"] != "c1" {
		t.Errorf("result %v", results[0])
	}
	if results[1]["content"] != `{"error":{"code":"TOOL_ERROR","message":"offline"}}` {
		t.Errorf("tool error %v", results[1])
	}
}

func TestRunSubagents(t *testing.T) {
	for _, vis := range []core.Visibility{core.Mediate, core.Passthrough} {
		t.Run(string(vis), func(t *testing.T) {
			boss := scripted("assistant", modeltest.ToolCall("core_delegate", map[string]any{"agentId": "writer", "input": "go"}), modeltest.Text("done"))
			boss.Supervisor = &core.SupervisorConfig{Agents: []core.SubAgent{{AgentID: "writer", Visibility: vis}}}
			s := newStack(t, setup{agents: []*core.Agent{boss, scripted("writer", modeltest.Text("draft"))}})
			_, evs, _ := s.post(t, runInput("t", "go"), nil)
			var want []string
			want = append(want, "RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "STEP_STARTED:subagent_writer", "STATE_SNAPSHOT")
			if vis == core.Passthrough {
				want = append(want, "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END")
			}
			want = append(want, "STEP_FINISHED:subagent_writer", "STATE_SNAPSHOT", "TOOL_CALL_RESULT",
				"TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "MESSAGES_SNAPSHOT", "RUN_FINISHED")
			wantTypes(t, evs, want...)
			snaps := find(evs, "STATE_SNAPSHOT")
			sub, _ := snaps[1]["snapshot"].(map[string]any)["subagent"].(map[string]any)
			if sub["subagentId"] != "writer" || sub["parentAgentId"] != "assistant" || sub["status"] != "finished" || sub["output"] != "draft" {
				t.Errorf("subagent snapshot %v", snaps[1])
			}
			// The thread's history ends the run; a passthrough writer's
			// message, which the client was shown but the thread does not
			// hold, stays where the client has it, under its streamed id.
			want = []string{"user:go", "assistant:call core_delegate", "tool:draft:for call-core_delegate", "assistant:done"}
			if vis == core.Passthrough {
				want = slices.Insert(want, 3, "assistant:draft")
			}
			msgs := find(evs, "MESSAGES_SNAPSHOT")[0]["messages"]
			if got := shapeOf(t, msgs); !slices.Equal(got, want) {
				t.Errorf("MESSAGES_SNAPSHOT\n got %q\nwant %q", got, want)
			}
			if vis == core.Passthrough && asSlice(msgs)[3].(map[string]any)["id"] != find(evs, "TEXT_MESSAGE_START")[0]["messageId"] {
				t.Errorf("the writer's message in the snapshot %v, streamed as %v", asSlice(msgs)[3], find(evs, "TEXT_MESSAGE_START")[0])
			}
		})
	}
}

type extractArgs struct {
	Text string `json:"text"`
}

type entities struct {
	Entities []string `json:"entities"`
}

func TestRunTask(t *testing.T) {
	a := scripted("assistant", modeltest.ToolCall("task_extract", extractArgs{Text: "Ada"}), modeltest.Text("done"))
	a.Tasks = []string{"extract"}
	task := typed.DefineTask[extractArgs, entities](core.Task{
		Name: "extract", Description: "Extract entities", Instructions: "List them.",
		Model: core.ModelRef{Provider: "tasks", Model: "small"}, Providers: modeltest.New(modeltest.JSON(entities{Entities: []string{"Ada"}})).Registry("tasks"),
	})
	s := newStack(t, setup{agents: []*core.Agent{a}, tasks: []*core.Task{task}})
	_, evs, _ := s.post(t, runInput("t", "x"), nil)
	got := strings.Join(typesOf(evs), " ")
	if !strings.Contains(got, "TOOL_CALL_END STEP_STARTED:task_") || !strings.Contains(got, "STATE_SNAPSHOT STEP_FINISHED:task_") {
		t.Fatalf("events %s", got)
	}
	snaps := find(evs, "STATE_SNAPSHOT")
	task1, _ := snaps[1]["snapshot"].(map[string]any)["task"].(map[string]any)
	if task1["taskId"] != "extract" || task1["status"] != "completed" {
		t.Errorf("task snapshot %v", snaps[1])
	}
}

// echo answers its input with a prefix, through a model that reads the
// last user message.
type echoModel struct{ prefix string }

func (e echoModel) Stream(_ context.Context, req core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	return func(yield func(core.ModelEvent, error) bool) {
		text := ""
		if n := len(req.Messages); n > 0 && len(req.Messages[n-1].Parts) > 0 {
			text = req.Messages[n-1].Parts[0].Text
		}
		if yield(core.ModelEvent{Type: core.EventTextDelta, Delta: e.prefix + text}, nil) {
			yield(modeltest.Finish(core.FinishStop), nil)
		}
	}
}

func TestRunLoop(t *testing.T) {
	host := scripted("assistant",
		modeltest.ToolCall("core_start_loop", map[string]any{"pipeline": []string{"drafter"}, "input": "x"}),
		modeltest.ToolCall("core_finish_loop", map[string]any{}),
		modeltest.Text("final"))
	host.Loop = &core.LoopConfig{Pool: []string{"drafter"}, MaxIterations: 2}
	drafter := &core.Agent{ID: "drafter", Model: core.ModelRef{Provider: "echo", Model: "m"}, Providers: core.ProviderRegistry{"echo": func(string) (core.LanguageModel, error) { return echoModel{"d:"}, nil }}}
	s := newStack(t, setup{agents: []*core.Agent{host, drafter}})
	_, evs, _ := s.post(t, runInput("t", "go"), nil)
	var loops []map[string]any
	for _, e := range find(evs, "STATE_SNAPSHOT") {
		if l, ok := e["snapshot"].(map[string]any)["loop"].(map[string]any); ok {
			loops = append(loops, l)
		}
	}
	if len(loops) < 3 || loops[0]["phase"] != "running" || loops[len(loops)-1]["phase"] != "finished" || loops[len(loops)-1]["status"] != "completed" {
		t.Fatalf("loop snapshots %v\n%v", loops, typesOf(evs))
	}
	got := strings.Join(typesOf(evs), " ")
	if !strings.Contains(got, "STEP_STARTED:loop_iteration_1") || !strings.Contains(got, "STEP_FINISHED:loop_iteration_1") {
		t.Errorf("iteration steps missing: %s", got)
	}
}

func TestRunError(t *testing.T) {
	s := newStack(t, setup{agents: []*core.Agent{scripted("assistant", modeltest.Fail(&core.BreadError{Code: core.CodeProviderError, Message: "model gone"}, "part"))}})
	_, evs, _ := s.post(t, runInput("t", "hi"), nil)
	wantTypes(t, evs, "RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_ERROR")
	if e := evs[len(evs)-1]; e["code"] != core.CodeProviderError || e["message"] != "model gone" {
		t.Errorf("RUN_ERROR %v", e)
	}
	// A plain Go error never reaches the client.
	s = newStack(t, setup{agents: []*core.Agent{scripted("assistant", modeltest.Fail(errors.New("dsn=postgres://secret")))}})
	_, evs, _ = s.post(t, runInput("t", "hi"), nil)
	if e := evs[len(evs)-1]; e["type"] != "RUN_ERROR" || e["code"] != core.CodeInternalError || strings.Contains(e["message"].(string), "secret") {
		t.Errorf("RUN_ERROR %v", e)
	}
}

func humanAgent(turns ...modeltest.Turn) *core.Agent {
	a := scripted("assistant", turns...)
	a.HumanTools = []core.HumanToolDef{{Name: "confirm", Prompt: "May I publish?", Schema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`)}}
	return a
}

func TestHumanInterruptAndResume(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		s := newStack(t, setup{store: open(t), agents: []*core.Agent{humanAgent(
			modeltest.ToolCall("human_confirm", map[string]string{"url": "https://bread.dev"}),
			modeltest.Text("Published."))}})
		_, evs, _ := s.post(t, runInput("thread-h", "publish"), nil)
		// The engine emits no tool:call for a human tool: the suspension is the
		// run's last word.
		wantTypes(t, evs, "RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED")
		fin := evs[len(evs)-1]
		outcome, _ := fin["outcome"].(map[string]any)
		ints, _ := outcome["interrupts"].([]any)
		if outcome["type"] != "interrupt" || len(ints) != 1 {
			t.Fatalf("RUN_FINISHED %v", fin)
		}
		in := ints[0].(map[string]any)
		id, _ := in["id"].(string)
		if id == "" || in["reason"] != agui.ReasonHumanInput || in["message"] != "May I publish?" {
			t.Fatalf("interrupt %v", in)
		}

		// Unhappy first: an unknown interrupt, an interrupt of another thread,
		// a resolved interrupt without payload, a cancelled human_input.
		for _, tt := range []struct {
			name, body, code string
			status           int
		}{
			{"unknown interrupt", resumeInput("thread-h", "nope", "resolved", map[string]any{}), core.CodeCheckpointNotFound, 404},
			{"other thread", resumeInput("thread-other", id, "resolved", map[string]any{}), core.CodeCheckpointNotFound, 404},
			{"no payload", resumeInput("thread-h", id, "resolved", nil), core.CodeValidationError, 400},
			{"cancelled input", resumeInput("thread-h", id, "cancelled", nil), core.CodeValidationError, 400},
		} {
			status, _, code := s.post(t, tt.body, nil)
			if status != tt.status || code != tt.code {
				t.Errorf("%s: %d %s, want %d %s", tt.name, status, code, tt.status, tt.code)
			}
		}

		status, evs, _ := s.post(t, resumeInput("thread-h", id, "resolved", map[string]any{"ok": true}), nil)
		if status != http.StatusOK {
			t.Fatalf("resume status %d", status)
		}
		wantTypes(t, evs, "RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "MESSAGES_SNAPSHOT", "RUN_FINISHED")
		if evs[0]["threadId"] != "thread-h" || evs[len(evs)-1]["result"] != "Published." || evs[len(evs)-1]["outcome"] != nil {
			t.Errorf("resumed run %v / %v", evs[0], evs[len(evs)-1])
		}
		// The checkpoint is claimed once.
		if status, _, code := s.post(t, resumeInput("thread-h", id, "resolved", map[string]any{"ok": true}), nil); status != 404 || code != core.CodeCheckpointNotFound {
			t.Errorf("second resume: %d %s", status, code)
		}
	})
}

func TestApprovalInterruptCancelled(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		a := scripted("assistant", modeltest.ToolCall("tool_add", addArgs{A: 1, B: 2}), modeltest.Text("Skipped."))
		a.Tools = []core.Tool{addTool()}
		a.Permissions = core.Permissions{Ask: []string{"tool:add"}}
		s := newStack(t, setup{store: open(t), agents: []*core.Agent{a}})
		_, evs, _ := s.post(t, runInput("t-a", "add"), nil)
		fin := evs[len(evs)-1]
		ints, _ := fin["outcome"].(map[string]any)["interrupts"].([]any)
		if len(ints) != 1 {
			t.Fatalf("RUN_FINISHED %v", fin)
		}
		in := ints[0].(map[string]any)
		if in["reason"] != agui.ReasonToolApproval || in["responseSchema"] == nil {
			t.Fatalf("interrupt %v", in)
		}
		// An answer that is not an approval is refused and the checkpoint stays.
		if status, _, code := s.post(t, resumeInput("t-a", in["id"].(string), "resolved", "yes"), nil); status != 400 || code != core.CodeValidationError {
			t.Fatalf("bad approval: %d %s", status, code)
		}
		_, evs, _ = s.post(t, resumeInput("t-a", in["id"].(string), "cancelled", nil), nil)
		if evs[0]["type"] != "RUN_STARTED" || evs[len(evs)-1]["result"] != "Skipped." {
			t.Fatalf("cancelled approval %v", evs)
		}
		// Cancelling is a refusal: the gated tool never ran.
		if find(evs, "TOOL_CALL_RESULT") != nil {
			t.Errorf("the refused tool ran: %v", evs)
		}
	})
}

func TestMalformedInput(t *testing.T) {
	s := newStack(t, setup{agents: []*core.Agent{scripted("assistant", modeltest.Text("never"))}})
	tests := []struct {
		name, body, code string
		status           int
	}{
		{"empty", ``, core.CodeBadRequest, 400},
		{"not JSON", `hello`, core.CodeBadRequest, 400},
		{"array", `[]`, core.CodeBadRequest, 400},
		{"trailing data", runInput("t", "hi") + `{}`, core.CodeBadRequest, 400},
		{"threadId not a string", `{"threadId":5,"messages":[]}`, core.CodeBadRequest, 400},
		{"no threadId", `{"messages":[{"id":"m","role":"user","content":"hi"}]}`, core.CodeValidationError, 400},
		{"no messages", `{"threadId":"t","messages":[]}`, core.CodeValidationError, 400},
		{"non-text content", `{"threadId":"t","messages":[{"id":"m","role":"user","content":[{"type":"binary","mimeType":"image/png","data":"AA=="}]}]}`, core.CodeValidationError, 400},
		{"one interrupt answered twice", `{"threadId":"t","messages":[],"resume":[{"interruptId":"a","status":"resolved","payload":{}},{"interruptId":"a","status":"resolved","payload":{}}]}`, core.CodeValidationError, 400},
		{"bad resume status", `{"threadId":"t","messages":[],"resume":[{"interruptId":"a","status":"maybe"}]}`, core.CodeValidationError, 400},
		{"long threadId", `{"threadId":"` + strings.Repeat("x", 300) + `","messages":[{"id":"m","role":"user","content":"hi"}]}`, core.CodeValidationError, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, code := s.post(t, tt.body, nil)
			if status != tt.status || code != tt.code {
				t.Errorf("%d %s, want %d %s", status, code, tt.status, tt.code)
			}
		})
	}
}

func TestBodyOverTheCap(t *testing.T) {
	s := newStack(t, setup{agents: []*core.Agent{scripted("assistant", modeltest.Text("never"))}, opts: agui.Options{MaxBodyBytes: 64}})
	status, _, code := s.post(t, runInput("t", strings.Repeat("x", 100)), nil)
	if status != http.StatusRequestEntityTooLarge || code != core.CodeBodyTooLarge {
		t.Errorf("%d %s", status, code)
	}
}

func TestAuthorizeThreadRunsAfterTheGrant(t *testing.T) {
	var seen []string
	s := newStack(t, setup{
		agents: []*core.Agent{scripted("assistant", modeltest.Text("ok"))},
		opts: agui.Options{AuthorizeThread: func(_ context.Context, id *core.AuthIdentity, thread string) bool {
			seen = append(seen, id.Subject+"/"+thread)
			return strings.HasPrefix(thread, id.Subject+"-")
		}},
		auth: &server.Auth{Strategies: []core.BreadAuthStrategy{headerAuth{}}, Authorize: func(_ context.Context, id *core.AuthIdentity, action string, _ map[string]string) bool {
			return action == agui.ActionRun && id.Subject != "intruder"
		}},
	})
	who := func(s string) http.Header { return http.Header{"X-User": {s}} }
	if status, _, _ := s.post(t, runInput("ann-1", "hi"), nil); status != http.StatusUnauthorized {
		t.Errorf("no identity: %d", status)
	}
	if status, _, _ := s.post(t, runInput("intruder-1", "hi"), who("intruder")); status != http.StatusForbidden {
		t.Errorf("action denied: %d", status)
	}
	if len(seen) != 0 {
		t.Errorf("AuthorizeThread ran before the grant: %v", seen)
	}
	if status, body := s.postRaw(t, runInput("bob-1", "hi"), who("ann")); status != http.StatusForbidden || body != server.ForbiddenBody {
		t.Errorf("foreign thread: %d %q, want 403 with the server's %q", status, body, server.ForbiddenBody)
	}
	if status, evs, _ := s.post(t, runInput("ann-1", "hi"), who("ann")); status != http.StatusOK || evs[len(evs)-1]["type"] != "RUN_FINISHED" {
		t.Errorf("own thread: %d %v", status, evs)
	}
	if strings.Join(seen, ",") != "ann/bob-1,ann/ann-1" {
		t.Errorf("AuthorizeThread calls %v", seen)
	}
}

type headerAuth struct{}

func (headerAuth) Name() string { return "header" }

func (headerAuth) Authenticate(r *http.Request) (*core.AuthIdentity, error) {
	if u := r.Header.Get("X-User"); u != "" {
		return &core.AuthIdentity{Subject: u}, nil
	}
	return nil, core.Errorf(core.CodeUnauthorized, "who are you")
}

func TestNewAndInitRefuseBadConfig(t *testing.T) {
	if _, err := agui.New(agui.Options{}); !isCode(err, core.CodeInvalidConfig) {
		t.Errorf("no agent: %v", err)
	}
	if _, err := agui.New(agui.Options{Agent: "a", Path: "x"}); !isCode(err, core.CodeInvalidConfig) {
		t.Errorf("relative path: %v", err)
	}
	p, err := agui.New(agui.Options{Agent: "ghost"})
	if err != nil {
		t.Fatal(err)
	}
	in, err := engine.New(engine.Config{Store: memory.New(), Agents: []*core.Agent{scripted("assistant")}, Plugins: []core.BreadPlugin{p}})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(t.Context()); !isCode(err, core.CodeAgentNotFound) {
		t.Errorf("unknown agent: %v", err)
	}
}

func isCode(err error, code string) bool {
	var be *core.BreadError
	return errors.As(err, &be) && be.Code == code
}

// interruptsOf returns the interrupt ids of a RUN_FINISHED, in order.
func interruptsOf(t *testing.T, fin map[string]any) []string {
	t.Helper()
	outcome, _ := fin["outcome"].(map[string]any)
	ints, _ := outcome["interrupts"].([]any)
	var ids []string
	for _, in := range ints {
		id, _ := in.(map[string]any)["id"].(string)
		ids = append(ids, id)
	}
	return ids
}

// A turn that asks two humans finishes with two interrupts; answering one
// finishes again with the other still pending, and answering several in
// one RunAgentInput resumes them in order, the last continuing the run.
func TestSeveralInterruptsOfOneTurn(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		twoHumans := func() *core.Agent {
			a := scripted("assistant",
				modeltest.ToolCalls(
					modeltest.Call{ID: "c1", Name: "human_confirm", Args: map[string]string{"url": "https://bread.dev"}},
					modeltest.Call{ID: "c2", Name: "human_channel", Args: map[string]string{}},
				),
				modeltest.Text("Published on the blog."))
			a.HumanTools = []core.HumanToolDef{
				{Name: "confirm", Prompt: "May I publish?", Schema: json.RawMessage(`{"type":"object"}`)},
				{Name: "channel", Prompt: "Which channel?", Schema: json.RawMessage(`{"type":"object"}`)},
			}
			return a
		}
		t.Run("one at a time", func(t *testing.T) {
			s := newStack(t, setup{store: open(t), agents: []*core.Agent{twoHumans()}})
			_, evs, _ := s.post(t, runInput("th", "publish"), nil)
			ids := interruptsOf(t, evs[len(evs)-1])
			if len(ids) != 2 {
				t.Fatalf("one interrupt per human call: %v", evs[len(evs)-1])
			}
			_, evs, _ = s.post(t, resumeInput("th", ids[0], "resolved", map[string]any{"ok": true}), nil)
			if got := interruptsOf(t, evs[len(evs)-1]); len(got) != 1 || got[0] != ids[1] {
				t.Fatalf("after the first answer the other is still pending: %v", got)
			}
			_, evs, _ = s.post(t, resumeInput("th", ids[1], "resolved", map[string]any{"channel": "blog"}), nil)
			if fin := evs[len(evs)-1]; fin["result"] != "Published on the blog." || fin["outcome"] != nil {
				t.Fatalf("the last answer continues the run: %v", fin)
			}
		})
		t.Run("together", func(t *testing.T) {
			s := newStack(t, setup{store: open(t), agents: []*core.Agent{twoHumans()}})
			_, evs, _ := s.post(t, runInput("th", "publish"), nil)
			ids := interruptsOf(t, evs[len(evs)-1])
			body, _ := json.Marshal(map[string]any{"threadId": "th", "messages": []any{}, "resume": []any{
				map[string]any{"interruptId": ids[1], "status": "resolved", "payload": map[string]any{"channel": "blog"}},
				map[string]any{"interruptId": ids[0], "status": "resolved", "payload": map[string]any{"ok": true}},
			}})
			// An entry naming no pending interrupt refuses the whole request
			// before anything is resumed.
			bad := strings.Replace(string(body), ids[0], "nope", 1)
			if status, _, code := s.post(t, bad, nil); status != 404 || code != core.CodeCheckpointNotFound {
				t.Fatalf("a request with an unknown interrupt: %d %s", status, code)
			}
			status, evs, _ := s.post(t, string(body), nil)
			if status != http.StatusOK {
				t.Fatalf("status %d", status)
			}
			fin := evs[len(evs)-1]
			if fin["type"] != "RUN_FINISHED" || fin["result"] != "Published on the blog." || fin["outcome"] != nil {
				t.Fatalf("both answered: the run finishes with its result and no interrupt: %v", evs)
			}
			if n := len(findAll(evs, "RUN_STARTED")); n != 1 {
				t.Errorf("one AG-UI run for the request, got %d RUN_STARTED", n)
			}
		})
		t.Run("two of three together", func(t *testing.T) {
			a := twoHumans()
			a.HumanTools = append(a.HumanTools, core.HumanToolDef{Name: "when", Prompt: "When?", Schema: json.RawMessage(`{"type":"object"}`)})
			a.Providers = modeltest.New(modeltest.ToolCalls(
				modeltest.Call{ID: "c1", Name: "human_confirm", Args: map[string]string{}},
				modeltest.Call{ID: "c2", Name: "human_channel", Args: map[string]string{}},
				modeltest.Call{ID: "c3", Name: "human_when", Args: map[string]string{}},
			), modeltest.Text("Scheduled.")).Registry("own")
			s := newStack(t, setup{store: open(t), agents: []*core.Agent{a}})
			_, evs, _ := s.post(t, runInput("th3", "publish"), nil)
			ids := interruptsOf(t, evs[len(evs)-1])
			if len(ids) != 3 {
				t.Fatalf("three interrupts: %v", ids)
			}
			body, _ := json.Marshal(map[string]any{"threadId": "th3", "messages": []any{}, "resume": []any{
				map[string]any{"interruptId": ids[0], "status": "resolved", "payload": map[string]any{}},
				map[string]any{"interruptId": ids[1], "status": "resolved", "payload": map[string]any{}},
			}})
			_, evs, _ = s.post(t, string(body), nil)
			if got := interruptsOf(t, evs[len(evs)-1]); len(got) != 1 || got[0] != ids[2] {
				t.Fatalf("after answering two of three, exactly the third is pending: %v", got)
			}
			_, evs, _ = s.post(t, resumeInput("th3", ids[2], "resolved", map[string]any{}), nil)
			if fin := evs[len(evs)-1]; fin["result"] != "Scheduled." {
				t.Fatalf("the last answer continues the run: %v", fin)
			}
		})
	})
}

func findAll(evs []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, e := range evs {
		if e["type"] == typ {
			out = append(out, e)
		}
	}
	return out
}

// A quiet run (a slow model) keeps its event stream alive with `: ping`
// comments, at most Heartbeat apart; a client that ignores comments sees
// the same events.
func TestKeepAliveWhileTheRunIsQuiet(t *testing.T) {
	const every = 60 * time.Millisecond
	s := newStack(t, setup{
		opts:   agui.Options{Agent: "assistant", Heartbeat: every},
		agents: []*core.Agent{scripted("assistant", modeltest.Slow(modeltest.Text("Late."), 10*every))},
	})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.url+agui.DefaultPath, strings.NewReader(runInput("t-ka", "hi")))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	var pings, events int
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		switch {
		case line == ": ping":
			pings++
		case strings.HasPrefix(line, "data: "):
			events++
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	// Loose on purpose: a loaded machine may delay ticks, never drop them
	// all.
	if pings < 2 {
		t.Errorf("%d pings over a run quiet for %v with a %v heartbeat", pings, 10*every, every)
	}
	if events < 4 {
		t.Errorf("%d events: the run's events must still arrive", events)
	}
}
