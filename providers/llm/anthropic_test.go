package llm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
)

func anthropicModelFor(t *testing.T, fv *fakeVendor) core.LanguageModel {
	t.Helper()
	m, err := NewAnthropic(AnthropicOptions{ClientOptions: ClientOptions{APIKey: testKey, BaseURL: fv.URL, HTTPClient: fv.client, Getenv: env(nil)}})("claude-sonnet-4-5")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAnthropicStreamsTextAndSendsTheWholeRequest(t *testing.T) {
	fv := newFakeVendor(t, sse(fixture(t, "anthropic/text.sse")), false)
	req := fullRequest()
	req.Messages[0].Parts = append(req.Messages[0].Parts, core.Part{Type: core.PartFile, MediaType: "application/pdf", Data: []byte("%PDF-1.4")})
	req.Output = &core.OutputSpec{Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)}
	evs, err := collect(t, anthropicModelFor(t, fv).Stream(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	checkContract(t, evs)
	if got := joined(evs, core.EventTextDelta); got != "Hello!" {
		t.Errorf("text %q", got)
	}
	if fin := evs[len(evs)-1]; fin.FinishReason != core.FinishStop || fin.Usage != (core.Usage{InputTokens: 25, OutputTokens: 15, TotalTokens: 40}) {
		t.Errorf("finish %+v", fin)
	}
	r := fv.last(t)
	if r.Path != "/v1/messages" || r.Header.Get("Authorization") != "Bearer "+testKey || r.Header.Get("Anthropic-Version") == "" {
		t.Errorf("request %s headers %v", r.Path, r.Header)
	}
	body := r.json(t)
	for k, v := range map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 256.0, "temperature": 0.2, "top_p": 0.9, "top_k": 40.0, "stream": true, "user": "u-1"} {
		if body[k] != v {
			t.Errorf("body[%s] = %v, want %v", k, body[k], v)
		}
	}
	if sys := body["system"].([]any)[0].(map[string]any); sys["text"] != "You are terse." {
		t.Errorf("system %v", sys)
	}
	msgs := body["messages"].([]any)
	// user, assistant, user(tool_result + "Thanks") — same-role turns fold.
	if len(msgs) != 3 {
		t.Fatalf("%d messages: %s", len(msgs), r.Body)
	}
	user := msgs[0].(map[string]any)["content"].([]any)
	if user[1].(map[string]any)["type"] != "image" || user[2].(map[string]any)["type"] != "document" {
		t.Errorf("user blocks %v", user)
	}
	asst := msgs[1].(map[string]any)["content"].([]any)
	if len(asst) != 2 || asst[1].(map[string]any)["type"] != "tool_use" || asst[1].(map[string]any)["input"].(map[string]any)["location"] != "Paris" {
		t.Errorf("assistant blocks %v (reasoning must be dropped)", asst)
	}
	last := msgs[2].(map[string]any)["content"].([]any)
	if tr := last[0].(map[string]any); tr["type"] != "tool_result" || tr["tool_use_id"] != "call_1" {
		t.Errorf("tool result %v", tr)
	}
	tool := body["tools"].([]any)[0].(map[string]any)
	if tool["name"] != "get_weather" || tool["input_schema"].(map[string]any)["required"] == nil {
		t.Errorf("tool %v", tool)
	}
	of := body["output_config"].(map[string]any)["format"].(map[string]any)
	if of["type"] != "json_schema" || of["schema"] == nil {
		t.Errorf("output_config %v", of)
	}
	if stop := body["stop_sequences"].([]any); stop[0] != "END" {
		t.Errorf("stop %v", stop)
	}
}

func TestAnthropicToolUseThinkingAndStructured(t *testing.T) {
	for _, tc := range []streamCase{
		{"anthropic/tool_use.sse", "Checking the weather.", "", map[string]string{"toolu_01A": `{"location": "San Francisco"}`}, core.FinishToolCalls},
		{"anthropic/tool_use_parallel.sse", "", "", map[string]string{"toolu_01A": `{"location":"Rome"}`, "toolu_01B": `{"tz":"Europe/Rome"}`}, core.FinishToolCalls},
		{"anthropic/thinking.sse", "27 * 453 = 12,231", "Let me solve this step by step: 27 * 453 = 12231", nil, core.FinishStop},
		{"anthropic/structured.sse", `{"city":"Paris","temp":21}`, "", nil, core.FinishStop},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			fv := newFakeVendor(t, sse(fixture(t, tc.fixture)), false)
			evs, err := collect(t, anthropicModelFor(t, fv).Stream(context.Background(), core.ModelRequest{}))
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, evs)
		})
	}
}

func TestAnthropicErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		rep  reply
		code string
	}{
		{"401", reply{status: 401, contentType: "application/json", body: fixture(t, "anthropic/error_401.json")}, core.CodeProviderAuth},
		{"429", reply{status: 429, header: map[string]string{"Retry-After": "12"}, contentType: "application/json", body: fixture(t, "anthropic/error_429.json")}, core.CodeRateLimited},
		{"context", reply{status: 400, contentType: "application/json", body: fixture(t, "anthropic/error_context.json")}, core.CodeContextTooLong},
		{"529 overloaded", reply{status: 529, contentType: "application/json", body: fixture(t, "anthropic/error_529.json")}, core.CodeProviderError},
		{"error event", sse(fixture(t, "anthropic/midstream_error.sse")), core.CodeProviderError},
		{"cut", reply{contentType: "text/event-stream", body: fixture(t, "anthropic/tool_use.sse"), cutAfter: 900}, core.CodeProviderError},
		{"ends early", sse(fixture(t, "anthropic/text.sse")[:700]), core.CodeProviderError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fv := newFakeVendor(t, tc.rep, false)
			_, err := collect(t, anthropicModelFor(t, fv).Stream(context.Background(), core.ModelRequest{}))
			be := wantCode(t, err, tc.code)
			if strings.Contains(be.Error(), testKey) {
				t.Errorf("key leaked: %s", be.Error())
			}
			if tc.code == core.CodeRateLimited && be.Context["retryAfter"] != 12.0 {
				t.Errorf("retryAfter %v", be.Context["retryAfter"])
			}
		})
	}
}

func TestAnthropicEarlyStopReleasesTheConnection(t *testing.T) {
	fv := newFakeVendor(t, sse(fixture(t, "anthropic/text.sse")), false)
	consumeFirst(anthropicModelFor(t, fv).Stream(context.Background(), core.ModelRequest{}))
	if n := fv.counter.open.Load(); n != 0 {
		t.Fatalf("%d bodies open", n)
	}
}
