package llm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/auth"
	"github.com/breadai/bread/core"
)

func geminiModelFor(t *testing.T, fv *fakeVendor) core.LanguageModel {
	t.Helper()
	m, err := NewGoogle(GoogleOptions{ClientOptions: ClientOptions{BaseURL: fv.URL, HTTPClient: fv.client, Getenv: env(map[string]string{"GEMINI_API_KEY": testKey})}})("gemini-2.5-flash")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestGeminiStreamsTextAndSendsTheWholeRequest(t *testing.T) {
	fv := newFakeVendor(t, sse(fixture(t, "gemini/text.sse")), false)
	req := fullRequest()
	req.Output = &core.OutputSpec{Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)}
	req.ProviderOptions = map[string]any{"thinkingConfig": map[string]any{"thinkingBudget": 1024}}
	evs, err := collect(t, geminiModelFor(t, fv).Stream(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	checkContract(t, evs)
	if got := joined(evs, core.EventTextDelta); got != "Hello, world" {
		t.Errorf("text %q", got)
	}
	if fin := evs[len(evs)-1]; fin.FinishReason != core.FinishStop || fin.Usage != (core.Usage{InputTokens: 9, OutputTokens: 3, TotalTokens: 12}) {
		t.Errorf("finish %+v", fin)
	}
	r := fv.last(t)
	if r.Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || !strings.Contains(r.Query, "alt=sse") {
		t.Errorf("path %s?%s", r.Path, r.Query)
	}
	if r.Header.Get("X-Goog-Api-Key") != testKey {
		t.Errorf("headers %v", r.Header)
	}
	body := r.json(t)
	gc := body["generationConfig"].(map[string]any)
	for k, v := range map[string]any{"maxOutputTokens": 256.0, "topK": 40.0, "seed": 7.0, "responseMimeType": "application/json"} {
		if gc[k] != v {
			t.Errorf("generationConfig[%s] = %v, want %v", k, gc[k], v)
		}
	}
	if gc["responseJsonSchema"] == nil || gc["thinkingConfig"].(map[string]any)["thinkingBudget"] != 1024.0 {
		t.Errorf("generationConfig %v", gc)
	}
	if t0, _ := gc["temperature"].(float64); t0 < 0.19 || t0 > 0.21 {
		t.Errorf("temperature %v", gc["temperature"])
	}
	sys := body["systemInstruction"].(map[string]any)["parts"].([]any)[0].(map[string]any)
	if sys["text"] != "You are terse." {
		t.Errorf("system %v", sys)
	}
	contents := body["contents"].([]any)
	if len(contents) != 3 {
		t.Fatalf("%d contents: %s", len(contents), r.Body)
	}
	user := contents[0].(map[string]any)["parts"].([]any)
	if user[1].(map[string]any)["inlineData"].(map[string]any)["mimeType"] != "image/png" {
		t.Errorf("user parts %v", user)
	}
	model := contents[1].(map[string]any)
	fc := model["parts"].([]any)[1].(map[string]any)
	if model["role"] != "model" || fc["functionCall"].(map[string]any)["name"] != "get_weather" || fc["thoughtSignature"] == nil {
		t.Errorf("model turn %v", model)
	}
	fr := contents[2].(map[string]any)["parts"].([]any)[0].(map[string]any)["functionResponse"].(map[string]any)
	if fr["name"] != "get_weather" || fr["response"].(map[string]any)["temp"] != 21.0 {
		t.Errorf("function response %v", fr)
	}
	decl := body["tools"].([]any)[0].(map[string]any)["functionDeclarations"].([]any)[0].(map[string]any)
	if decl["name"] != "get_weather" || decl["parametersJsonSchema"] == nil {
		t.Errorf("tool %v", decl)
	}
}

func TestGeminiEvents(t *testing.T) {
	for _, tc := range []struct {
		fixture, text, reasoning string
		calls                    map[string]string // name -> input
		files                    int
		reason                   core.FinishReason
	}{
		{"gemini/tool_call.sse", "", "", map[string]string{"get_weather": `{"location":"Paris"}`}, 0, core.FinishToolCalls},
		{"gemini/tool_calls_parallel.sse", "", "", map[string]string{"get_weather": `{"location":"Rome"}`, "get_time": `{"tz":"Europe/Rome"}`}, 0, core.FinishToolCalls},
		{"gemini/thinking.sse", "4", "**Weighing the sum** Two plus two", nil, 0, core.FinishStop},
		{"gemini/structured.sse", `{"city": "Paris", "temp": 21}`, "", nil, 0, core.FinishStop},
		{"gemini/image_out.sse", "Here is a banana.", "", nil, 1, core.FinishStop},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			fv := newFakeVendor(t, sse(fixture(t, tc.fixture)), false)
			evs, err := collect(t, geminiModelFor(t, fv).Stream(context.Background(), core.ModelRequest{}))
			if err != nil {
				t.Fatal(err)
			}
			checkContract(t, evs)
			if got := joined(evs, core.EventTextDelta); got != tc.text {
				t.Errorf("text %q", got)
			}
			if got := joined(evs, core.EventReasoningDelta); got != tc.reasoning {
				t.Errorf("reasoning %q", got)
			}
			calls := ofType(evs, core.EventToolCall)
			if len(calls) != len(tc.calls) {
				t.Fatalf("calls %+v", calls)
			}
			seen := map[string]bool{}
			for _, c := range calls {
				if string(c.Input) != tc.calls[c.ToolName] || c.ToolCallID == "" || seen[c.ToolCallID] {
					t.Errorf("call %s %s %s", c.ToolCallID, c.ToolName, c.Input)
				}
				seen[c.ToolCallID] = true
			}
			files := ofType(evs, core.EventFile)
			if len(files) != tc.files {
				t.Fatalf("files %+v", files)
			}
			if tc.files > 0 && (files[0].File.MediaType != "image/png" || len(files[0].File.Data) == 0) {
				t.Errorf("file %+v", files[0].File)
			}
			if fin := evs[len(evs)-1]; fin.FinishReason != tc.reason {
				t.Errorf("finish %v", fin.FinishReason)
			}
		})
	}
}

func TestGeminiErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		rep  reply
		code string
	}{
		{"bad key 400", reply{status: 400, contentType: "application/json", body: fixture(t, "gemini/error_400_key.json")}, core.CodeProviderAuth},
		{"403", reply{status: 403, contentType: "application/json", body: fixture(t, "gemini/error_403.json")}, core.CodeProviderAuth},
		{"429", reply{status: 429, contentType: "application/json", body: fixture(t, "gemini/error_429.json")}, core.CodeRateLimited},
		{"context", reply{status: 400, contentType: "application/json", body: fixture(t, "gemini/error_context.json")}, core.CodeContextTooLong},
		{"500", reply{status: 500, contentType: "application/json", body: []byte(`{"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}`)}, core.CodeProviderError},
		{"cut", reply{contentType: "text/event-stream", body: fixture(t, "gemini/text.sse"), cutAfter: 120}, core.CodeProviderError},
		{"ends early", sse(fixture(t, "gemini/tool_calls_parallel.sse")[:300]), core.CodeProviderError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fv := newFakeVendor(t, tc.rep, false)
			_, err := collect(t, geminiModelFor(t, fv).Stream(context.Background(), core.ModelRequest{}))
			be := wantCode(t, err, tc.code)
			if strings.Contains(be.Error(), testKey) {
				t.Errorf("key leaked: %s", be.Error())
			}
			if tc.code == core.CodeRateLimited && be.Context["retryAfter"] != 37.0 {
				t.Errorf("retryAfter %v", be.Context["retryAfter"])
			}
		})
	}
}

type staticToken string

func (s staticToken) Token(context.Context) (*auth.Token, error) {
	return &auth.Token{Value: string(s), Type: "Bearer", Expiry: time.Now().Add(time.Hour)}, nil
}

func TestVertexUsesProjectLocationAndOAuth(t *testing.T) {
	fv := newFakeVendor(t, sse(fixture(t, "gemini/text.sse")), false)
	f := NewVertex(VertexOptions{ClientOptions: ClientOptions{BaseURL: fv.URL, HTTPClient: fv.client, Getenv: env(map[string]string{"GOOGLE_VERTEX_PROJECT": "my-proj", "GOOGLE_VERTEX_LOCATION": "europe-west4"})}, TokenProvider: staticToken("ya29.token")})
	m, err := f("gemini-2.5-pro")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(t, m.Stream(context.Background(), core.ModelRequest{Messages: []core.Message{{Role: core.RoleUser, Parts: []core.Part{core.TextPart("hi")}}}}))
	if err != nil {
		t.Fatal(err)
	}
	checkContract(t, evs)
	r := fv.last(t)
	if want := "/v1beta1/projects/my-proj/locations/europe-west4/publishers/google/models/gemini-2.5-pro:streamGenerateContent"; r.Path != want {
		t.Errorf("path %s, want %s", r.Path, want)
	}
	if r.Header.Get("Authorization") != "Bearer ya29.token" || r.Header.Get("X-Goog-Api-Key") != "" {
		t.Errorf("auth headers %v", r.Header)
	}

	// Express mode: an API key instead of OAuth.
	m, err = NewVertex(VertexOptions{ClientOptions: ClientOptions{BaseURL: fv.URL, HTTPClient: fv.client, Getenv: env(map[string]string{"GOOGLE_VERTEX_API_KEY": testKey})}})("gemini-2.5-pro")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := collect(t, m.Stream(context.Background(), core.ModelRequest{})); err != nil {
		t.Fatal(err)
	}
	if r := fv.last(t); r.Header.Get("X-Goog-Api-Key") != testKey || !strings.HasSuffix(r.Path, "publishers/google/models/gemini-2.5-pro:streamGenerateContent") {
		t.Errorf("express request %s %v", r.Path, r.Header)
	}

	if _, err := NewVertex(VertexOptions{ClientOptions: ClientOptions{Getenv: env(nil)}, TokenProvider: staticToken("x")})("gemini-2.5-pro"); err == nil {
		t.Error("no project must fail")
	}
}

func TestGeminiEarlyStopReleasesTheConnection(t *testing.T) {
	fv := newFakeVendor(t, sse(fixture(t, "gemini/text.sse")), false)
	consumeFirst(geminiModelFor(t, fv).Stream(context.Background(), core.ModelRequest{}))
	if n := fv.counter.open.Load(); n != 0 {
		t.Fatalf("%d bodies open", n)
	}
}
