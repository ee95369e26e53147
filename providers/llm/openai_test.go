package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

const testKey = "sk-test-secret-123456"

func openAIModelFor(t *testing.T, fv *fakeVendor, vendor string, opts OpenAIOptions) core.LanguageModel {
	t.Helper()
	if opts.APIKey == "" {
		opts.APIKey = testKey
	}
	opts.BaseURL = fv.URL + "/v1"
	opts.HTTPClient = fv.client
	m, err := NewOpenAICompatible(vendor, opts)("gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sse(body []byte) reply { return reply{contentType: "text/event-stream", body: body} }

// fullRequest exercises every part of the port's request.
func fullRequest() core.ModelRequest {
	return core.ModelRequest{
		System: "You are terse.",
		Messages: []core.Message{
			{Role: core.RoleUser, Parts: []core.Part{core.TextPart("What is in this image?"), {Type: core.PartFile, MediaType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}}}},
			{Role: core.RoleAssistant, Parts: []core.Part{{Type: core.PartReasoning, Text: "hidden"}, core.TextPart("Let me check."), {Type: core.PartToolCall, ToolCallID: "call_1", ToolName: "get_weather", Input: json.RawMessage(`{"location":"Paris"}`)}}},
			{Role: core.RoleTool, Parts: []core.Part{{Type: core.PartToolResult, ToolCallID: "call_1", ToolName: "get_weather", Output: json.RawMessage(`{"temp":21}`)}}},
			{Role: core.RoleUser, Parts: []core.Part{core.TextPart("Thanks")}},
		},
		Tools: []core.ToolSpec{{Name: "get_weather", Description: "Weather by city", InputSchema: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)}},
		Settings: core.ModelSettings{
			MaxOutputTokens: ptr(256), Temperature: ptr(0.2), TopP: ptr(0.9), TopK: ptr(40),
			PresencePenalty: ptr(0.1), FrequencyPenalty: ptr(0.3), StopSequences: []string{"END"}, Seed: ptr(int64(7)),
		},
		ProviderOptions: map[string]any{"user": "u-1"},
	}
}

func TestOpenAIStreamsTextAndSendsTheWholeRequest(t *testing.T) {
	fv := newFakeVendor(t, sse(fixture(t, "openai/text.sse")), false)
	m := openAIModelFor(t, fv, "openai", OpenAIOptions{ClientOptions: ClientOptions{Headers: map[string]string{"X-Trace": "t1"}}, Organization: "org-1"})
	evs, err := collect(t, m.Stream(context.Background(), fullRequest()))
	if err != nil {
		t.Fatal(err)
	}
	checkContract(t, evs)
	if got := joined(evs, core.EventTextDelta); got != "Hello, world" {
		t.Errorf("text %q", got)
	}
	fin := evs[len(evs)-1]
	if fin.FinishReason != core.FinishStop || fin.Usage != (core.Usage{InputTokens: 12, OutputTokens: 3, TotalTokens: 15}) {
		t.Errorf("finish %+v", fin)
	}

	r := fv.last(t)
	if r.Method != http.MethodPost || r.Path != "/v1/chat/completions" {
		t.Errorf("request %s %s", r.Method, r.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization %q", got)
	}
	if r.Header.Get("X-Trace") != "t1" || r.Header.Get("OpenAI-Organization") != "org-1" {
		t.Errorf("headers %v", r.Header)
	}
	body := r.json(t)
	want := map[string]any{
		"model": "gpt-4o", "stream": true, "temperature": 0.2, "top_p": 0.9, "max_completion_tokens": 256.0,
		"presence_penalty": 0.1, "frequency_penalty": 0.3, "seed": 7.0, "user": "u-1",
	}
	for k, v := range want {
		if body[k] != v {
			t.Errorf("body[%s] = %v, want %v", k, body[k], v)
		}
	}
	if _, ok := body["top_k"]; ok {
		t.Error("top_k sent to OpenAI, which has none")
	}
	if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options %v", body["stream_options"])
	}
	msgs := body["messages"].([]any)
	if len(msgs) != 5 {
		t.Fatalf("%d messages: %s", len(msgs), r.Body)
	}
	sys := msgs[0].(map[string]any)
	if sys["role"] != "system" || sys["content"] != "You are terse." {
		t.Errorf("system %v", sys)
	}
	user := msgs[1].(map[string]any)
	parts := user["content"].([]any)
	img := parts[1].(map[string]any)
	if img["type"] != "image_url" || !strings.HasPrefix(img["image_url"].(map[string]any)["url"].(string), "data:image/png;base64,") {
		t.Errorf("image part %v", img)
	}
	asst := msgs[2].(map[string]any)
	tc := asst["tool_calls"].([]any)[0].(map[string]any)
	if asst["content"] != "Let me check." || tc["id"] != "call_1" || tc["function"].(map[string]any)["arguments"] != `{"location":"Paris"}` {
		t.Errorf("assistant %v", asst)
	}
	tool := msgs[3].(map[string]any)
	if tool["role"] != "tool" || tool["tool_call_id"] != "call_1" || tool["content"] != `{"temp":21}` {
		t.Errorf("tool message %v", tool)
	}
	if msgs[4].(map[string]any)["content"] != "Thanks" {
		t.Errorf("last user message %v", msgs[4])
	}
	fn := body["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)
	if fn["name"] != "get_weather" || fn["description"] != "Weather by city" || fn["parameters"].(map[string]any)["required"] == nil {
		t.Errorf("tool %v", fn)
	}
	if stop := body["stop"].([]any); stop[0] != "END" {
		t.Errorf("stop %v", stop)
	}
}

func TestOpenAIToolCalls(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		want    map[string]string // id -> input
		names   map[string]string
	}{
		{"openai/tool_call.sse", map[string]string{"call_weather1": `{"location":"Paris"}`}, map[string]string{"call_weather1": "get_weather"}},
		{"openai/tool_calls_parallel.sse", map[string]string{"call_a": `{"location":"Rome"}`, "call_b": `{"tz":"Europe/Rome"}`}, map[string]string{"call_a": "get_weather", "call_b": "get_time"}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			fv := newFakeVendor(t, sse(fixture(t, tc.fixture)), false)
			evs, err := collect(t, openAIModelFor(t, fv, "openai", OpenAIOptions{}).Stream(context.Background(), core.ModelRequest{Messages: []core.Message{{Role: core.RoleUser, Parts: []core.Part{core.TextPart("weather?")}}}}))
			if err != nil {
				t.Fatal(err)
			}
			checkContract(t, evs)
			calls := ofType(evs, core.EventToolCall)
			if len(calls) != len(tc.want) {
				t.Fatalf("%d tool calls, want %d: %+v", len(calls), len(tc.want), evs)
			}
			deltas := map[string]string{}
			for _, e := range ofType(evs, core.EventToolInputDelta) {
				deltas[e.ToolCallID] += e.Delta
			}
			for _, c := range calls {
				if string(c.Input) != tc.want[c.ToolCallID] || c.ToolName != tc.names[c.ToolCallID] {
					t.Errorf("call %s %s %s", c.ToolCallID, c.ToolName, c.Input)
				}
				if deltas[c.ToolCallID] != tc.want[c.ToolCallID] {
					t.Errorf("deltas of %s joined to %q", c.ToolCallID, deltas[c.ToolCallID])
				}
			}
			if fin := evs[len(evs)-1]; fin.FinishReason != core.FinishToolCalls {
				t.Errorf("finish %v", fin.FinishReason)
			}
		})
	}
}

func TestOpenAICompatibleReasoning(t *testing.T) {
	for _, tc := range []struct{ vendor, fixture, reasoning, text string }{
		{"deepseek", "openai/reasoning.sse", "The user asks 2+2. That is 4.", "4"},
		{"groq", "openai/reasoning_groq.sse", "Thinking", "Done"},
	} {
		t.Run(tc.vendor, func(t *testing.T) {
			fv := newFakeVendor(t, sse(fixture(t, tc.fixture)), false)
			evs, err := collect(t, openAIModelFor(t, fv, tc.vendor, OpenAIOptions{}).Stream(context.Background(), core.ModelRequest{}))
			if err != nil {
				t.Fatal(err)
			}
			checkContract(t, evs)
			if got := joined(evs, core.EventReasoningDelta); got != tc.reasoning {
				t.Errorf("reasoning %q", got)
			}
			if got := joined(evs, core.EventTextDelta); got != tc.text {
				t.Errorf("text %q", got)
			}
		})
	}
}

func TestOpenAIStructuredOutput(t *testing.T) {
	out := &core.OutputSpec{Name: "weather", Description: "A report", Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"temp":{"type":"number"}},"required":["city","temp"]}`)}
	t.Run("json_schema", func(t *testing.T) {
		fv := newFakeVendor(t, sse(fixture(t, "openai/structured.sse")), false)
		evs, err := collect(t, openAIModelFor(t, fv, "openai", OpenAIOptions{StrictJSONSchema: true}).Stream(context.Background(), core.ModelRequest{Output: out}))
		if err != nil {
			t.Fatal(err)
		}
		if got := joined(evs, core.EventTextDelta); got != `{"city":"Paris","temp":21}` {
			t.Errorf("text %q", got)
		}
		rf := fv.last(t).json(t)["response_format"].(map[string]any)
		js := rf["json_schema"].(map[string]any)
		if rf["type"] != "json_schema" || js["name"] != "weather" || js["strict"] != true || js["schema"].(map[string]any)["required"] == nil {
			t.Errorf("response_format %v", rf)
		}
	})
	t.Run("json_object vendor", func(t *testing.T) {
		fv := newFakeVendor(t, sse(fixture(t, "openai/structured.sse")), false)
		if _, err := collect(t, openAIModelFor(t, fv, "deepseek", OpenAIOptions{}).Stream(context.Background(), core.ModelRequest{System: "Be brief.", Output: out})); err != nil {
			t.Fatal(err)
		}
		body := fv.last(t).json(t)
		if body["response_format"].(map[string]any)["type"] != "json_object" {
			t.Errorf("response_format %v", body["response_format"])
		}
		sys := body["messages"].([]any)[0].(map[string]any)["content"].(string)
		if !strings.Contains(sys, "Be brief.") || !strings.Contains(sys, `"city"`) {
			t.Errorf("system prompt does not carry the schema: %q", sys)
		}
		if _, ok := body["max_completion_tokens"]; ok {
			t.Error("a compatible vendor got max_completion_tokens")
		}
	})
}

func TestOpenAIErrors(t *testing.T) {
	httpDate := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	for _, tc := range []struct {
		name       string
		rep        reply
		code       string
		retryAfter float64 // 0: not checked; -1: absent
	}{
		{"401", reply{status: 401, contentType: "application/json", body: fixture(t, "openai/error_401.json")}, core.CodeProviderAuth, -1},
		{"403", reply{status: 403, contentType: "application/json", body: []byte(`{"error":{"message":"forbidden","type":"permission_error"}}`)}, core.CodeProviderAuth, -1},
		{"429 seconds", reply{status: 429, header: map[string]string{"Retry-After": "7"}, contentType: "application/json", body: fixture(t, "openai/error_429.json")}, core.CodeRateLimited, 7},
		{"429 date", reply{status: 429, header: map[string]string{"Retry-After": httpDate}, contentType: "application/json", body: fixture(t, "openai/error_429.json")}, core.CodeRateLimited, 30},
		{"context length", reply{status: 400, contentType: "application/json", body: fixture(t, "openai/error_context.json")}, core.CodeContextTooLong, -1},
		{"500", reply{status: 500, contentType: "application/json", body: fixture(t, "openai/error_500.json")}, core.CodeProviderError, -1},
		{"error event mid-stream", sse(fixture(t, "openai/midstream_error.sse")), core.CodeProviderError, -1},
		{"stream cut", reply{contentType: "text/event-stream", body: fixture(t, "openai/tool_call.sse"), cutAfter: 600}, core.CodeProviderError, -1},
		{"stream ends early", sse(fixture(t, "openai/text.sse")[:400]), core.CodeProviderError, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fv := newFakeVendor(t, tc.rep, false)
			_, err := collect(t, openAIModelFor(t, fv, "openai", OpenAIOptions{}).Stream(context.Background(), core.ModelRequest{}))
			be := wantCode(t, err, tc.code)
			if strings.Contains(be.Error(), testKey) || strings.Contains(be.Cause.Error(), testKey) {
				t.Errorf("the key leaked: %s", be.Error())
			}
			switch ra, ok := be.Context["retryAfter"].(float64); {
			case tc.retryAfter == -1 && ok:
				t.Errorf("unexpected retryAfter %v", ra)
			case tc.retryAfter > 0 && (!ok || ra < tc.retryAfter-2 || ra > tc.retryAfter+1):
				t.Errorf("retryAfter %v, want about %v", be.Context["retryAfter"], tc.retryAfter)
			}
		})
	}
}

func TestOpenAIEarlyStopAndCancelReleaseTheConnection(t *testing.T) {
	fv := newFakeVendor(t, sse(fixture(t, "openai/text.sse")), false)
	m := openAIModelFor(t, fv, "openai", OpenAIOptions{})
	consumeFirst(m.Stream(context.Background(), core.ModelRequest{}))
	if n := fv.counter.open.Load(); n != 0 {
		t.Fatalf("%d bodies open after an early stop", n)
	}

	// A server that never finishes: cancelling ctx must end the stream.
	hang := make(chan struct{})
	srv := newFakeVendor(t, reply{}, false)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	defer close(hang)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m = openAIModelFor(t, srv, "openai", OpenAIOptions{})
	var gotErr error
	for ev, err := range m.Stream(ctx, core.ModelRequest{}) {
		if err != nil {
			gotErr = err
			break
		}
		if ev.Type == core.EventTextDelta {
			cancel()
		}
	}
	if gotErr != context.Canceled {
		t.Fatalf("error %v, want context.Canceled", gotErr)
	}
	if n := srv.counter.open.Load(); n != 0 {
		t.Fatalf("%d bodies open after cancel", n)
	}
}
