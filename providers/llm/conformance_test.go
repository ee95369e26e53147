package llm

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"unicode/utf8"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/lmtest"
)

// The adapters run the lmtest conformance suite against local servers that
// speak each vendor's streaming wire format, generated per scenario.

func TestOpenAIConformance(t *testing.T) {
	lmtest.Run(t, lmtest.Features{NoReasoning: true}, func(t *testing.T, s lmtest.Scenario) core.LanguageModel {
		return openAIConformanceModel(t, s, "openai")
	})
}

// DeepSeek speaks the same API plus reasoning_content deltas.
func TestOpenAICompatibleConformance(t *testing.T) {
	lmtest.Run(t, lmtest.Features{}, func(t *testing.T, s lmtest.Scenario) core.LanguageModel {
		return openAIConformanceModel(t, s, "deepseek")
	})
}

func TestAnthropicConformance(t *testing.T) {
	lmtest.Run(t, lmtest.Features{}, func(t *testing.T, s lmtest.Scenario) core.LanguageModel {
		b := lmtest.NewBackend(t, s, anthropicWire(s))
		m, err := NewAnthropic(AnthropicOptions{ClientOptions: ClientOptions{APIKey: lmtest.APIKey, BaseURL: b.URL, HTTPClient: b.Client(), Getenv: env(nil)}})("claude-sonnet-4-5")
		if err != nil {
			t.Fatal(err)
		}
		return m
	})
}

func openAIConformanceModel(t *testing.T, s lmtest.Scenario, vendor string) core.LanguageModel {
	b := lmtest.NewBackend(t, s, openAIWire(s))
	m, err := NewOpenAICompatible(vendor, OpenAIOptions{ClientOptions: ClientOptions{APIKey: lmtest.APIKey, BaseURL: b.URL + "/v1", HTTPClient: b.Client(), Getenv: env(nil)}})("gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// pieces splits s into up to n parts on rune boundaries, the way vendors
// stream tool arguments token by token.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		size := max(len(s)/n, 1)
		for size < len(s) && !utf8.RuneStart(s[size]) {
			size++
		}
		out = append(out, s[:size])
		s = s[size:]
		n = max(n-1, 1)
	}
	return out
}

func writeJSONError(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, mustJSON(body))
}

// openAIWire answers as Chat Completions streaming does: one
// chat.completion.chunk per delta, tool calls keyed by index with the id
// and name on their first chunk, a finish_reason chunk, a usage chunk with
// no choices (stream_options.include_usage), then [DONE].
func openAIWire(s lmtest.Scenario) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if s.Status != 0 {
			kind := map[int][2]string{
				401: {"invalid_request_error", "invalid_api_key"},
				403: {"permission_error", "unsupported_country_region_territory"},
				429: {"requests", "rate_limit_exceeded"},
				503: {"server_error", "overloaded"},
			}[s.Status]
			typ, code := kind[0], kind[1]
			if typ == "" {
				typ = "server_error"
			}
			writeJSONError(w, s.Status, map[string]any{"error": map[string]any{"message": s.ErrorMessage, "type": typ, "param": nil, "code": code}})
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta map[string]any, finish any) {
			lmtest.WriteSSE(w, "", mustJSON(map[string]any{
				"id": "chatcmpl-lmtest", "object": "chat.completion.chunk", "created": 1730000000, "model": "gpt-4o",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
				"usage":   nil,
			}))
		}
		chunk(map[string]any{"role": "assistant", "content": ""}, nil)
		for _, c := range s.Reasoning {
			chunk(map[string]any{"reasoning_content": c}, nil)
		}
		for _, c := range s.Text {
			chunk(map[string]any{"content": c}, nil)
		}
		for i, tc := range s.ToolCalls {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": ""}}}}, nil)
			for _, p := range pieces(tc.Args, 3) {
				chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": p}}}}, nil)
			}
		}
		switch {
		case s.Stall:
			s.Hang(r)
			return
		case s.Truncate:
			lmtest.Abort(w)
		}
		chunk(map[string]any{}, map[core.FinishReason]string{core.FinishStop: "stop", core.FinishToolCalls: "tool_calls", core.FinishLength: "length"}[s.Finish])
		lmtest.WriteSSE(w, "", mustJSON(map[string]any{
			"id": "chatcmpl-lmtest", "object": "chat.completion.chunk", "created": 1730000000, "model": "gpt-4o", "choices": []any{},
			"usage": map[string]any{"prompt_tokens": s.Usage.InputTokens, "completion_tokens": s.Usage.OutputTokens, "total_tokens": s.Usage.TotalTokens},
		}))
		lmtest.WriteSSE(w, "", "[DONE]")
	}
}

// anthropicWire answers as the Messages API streams: message_start with the
// input tokens, one content block per thinking, text and tool_use (with
// input_json_delta pieces), a ping, message_delta with the stop reason and
// output tokens, then message_stop.
func anthropicWire(s lmtest.Scenario) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if s.Status != 0 {
			typ := map[int]string{401: "authentication_error", 403: "permission_error", 429: "rate_limit_error", 503: "overloaded_error"}[s.Status]
			if typ == "" {
				typ = "api_error"
			}
			writeJSONError(w, s.Status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": s.ErrorMessage}, "request_id": "req_lmtest"})
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(v map[string]any) { lmtest.WriteSSE(w, v["type"].(string), mustJSON(v)) }
		send(map[string]any{"type": "message_start", "message": map[string]any{
			"id": "msg_lmtest", "type": "message", "role": "assistant", "content": []any{}, "model": "claude-sonnet-4-5",
			"stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": s.Usage.InputTokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1},
		}})
		index := 0
		block := func(start map[string]any, deltas []map[string]any) {
			send(map[string]any{"type": "content_block_start", "index": index, "content_block": start})
			for _, d := range deltas {
				send(map[string]any{"type": "content_block_delta", "index": index, "delta": d})
			}
			send(map[string]any{"type": "content_block_stop", "index": index})
			index++
		}
		if len(s.Reasoning) > 0 {
			var ds []map[string]any
			for _, c := range s.Reasoning {
				ds = append(ds, map[string]any{"type": "thinking_delta", "thinking": c})
			}
			block(map[string]any{"type": "thinking", "thinking": "", "signature": ""}, append(ds, map[string]any{"type": "signature_delta", "signature": "c2lnbmF0dXJl"}))
		}
		send(map[string]any{"type": "ping"})
		if len(s.Text) > 0 {
			var ds []map[string]any
			for _, c := range s.Text {
				ds = append(ds, map[string]any{"type": "text_delta", "text": c})
			}
			block(map[string]any{"type": "text", "text": ""}, ds)
		}
		for _, tc := range s.ToolCalls {
			ds := []map[string]any{{"type": "input_json_delta", "partial_json": ""}}
			for _, p := range pieces(tc.Args, 3) {
				ds = append(ds, map[string]any{"type": "input_json_delta", "partial_json": p})
			}
			block(map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": map[string]any{}}, ds)
		}
		switch {
		case s.Stall:
			s.Hang(r)
			return
		case s.Truncate:
			lmtest.Abort(w)
		}
		send(map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": map[core.FinishReason]string{core.FinishStop: "end_turn", core.FinishToolCalls: "tool_use", core.FinishLength: "max_tokens"}[s.Finish], "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": s.Usage.OutputTokens},
		})
		send(map[string]any{"type": "message_stop"})
	}
}

// Gemini's calls carry no ids: the adapter makes them up.
func TestGeminiConformance(t *testing.T) {
	lmtest.Run(t, lmtest.Features{NoToolCallIDs: true}, func(t *testing.T, s lmtest.Scenario) core.LanguageModel {
		b := lmtest.NewBackend(t, s, geminiWire(s))
		m, err := NewGoogle(GoogleOptions{ClientOptions: ClientOptions{APIKey: lmtest.APIKey, BaseURL: b.URL, HTTPClient: b.Client(), Getenv: env(nil)}})("gemini-2.5-flash")
		if err != nil {
			t.Fatal(err)
		}
		return m
	})
}

func TestCohereConformance(t *testing.T) {
	lmtest.Run(t, lmtest.Features{}, func(t *testing.T, s lmtest.Scenario) core.LanguageModel {
		b := lmtest.NewBackend(t, s, cohereWire(s))
		m, err := NewCohere(CohereOptions{ClientOptions: ClientOptions{APIKey: lmtest.APIKey, BaseURL: b.URL, HTTPClient: b.Client(), Getenv: env(nil)}})("command-a-03-2025")
		if err != nil {
			t.Fatal(err)
		}
		return m
	})
}

// geminiWire answers as streamGenerateContent?alt=sse does: one
// GenerateContentResponse per chunk, thoughts as parts with thought: true,
// each function call whole, finishReason and usageMetadata on the last.
func geminiWire(s lmtest.Scenario) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if s.Status != 0 {
			status := map[int]string{401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}[s.Status]
			if status == "" {
				status = "INTERNAL"
			}
			writeJSONError(w, s.Status, map[string]any{"error": map[string]any{"code": s.Status, "message": s.ErrorMessage, "status": status}})
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(parts []any, final bool) {
			cand := map[string]any{"content": map[string]any{"parts": parts, "role": "model"}, "index": 0}
			resp := map[string]any{"candidates": []any{cand}, "modelVersion": "gemini-2.5-flash", "responseId": "resp-lmtest"}
			if final {
				cand["finishReason"] = map[core.FinishReason]string{core.FinishStop: "STOP", core.FinishToolCalls: "STOP", core.FinishLength: "MAX_TOKENS"}[s.Finish]
				resp["usageMetadata"] = map[string]any{"promptTokenCount": s.Usage.InputTokens, "candidatesTokenCount": s.Usage.OutputTokens, "totalTokenCount": s.Usage.TotalTokens}
			}
			lmtest.WriteSSE(w, "", mustJSON(resp))
		}
		for _, c := range s.Reasoning {
			send([]any{map[string]any{"text": c, "thought": true}}, false)
		}
		for _, c := range s.Text {
			send([]any{map[string]any{"text": c}}, false)
		}
		if len(s.ToolCalls) > 0 {
			var parts []any
			for _, tc := range s.ToolCalls {
				parts = append(parts, map[string]any{"functionCall": map[string]any{"name": tc.Name, "args": json.RawMessage(tc.Args)}})
			}
			send(parts, false)
		}
		switch {
		case s.Stall:
			s.Hang(r)
			return
		case s.Truncate:
			lmtest.Abort(w)
		}
		send([]any{map[string]any{"text": ""}}, true)
	}
}

// cohereWire answers as Cohere's v2 chat stream does: message-start,
// content-start/delta/end per thinking and text block, tool-call-start,
// -delta, -end per call, then message-end with the finish reason and
// token usage.
func cohereWire(s lmtest.Scenario) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if s.Status != 0 {
			writeJSONError(w, s.Status, map[string]any{"id": "lmtest", "message": s.ErrorMessage})
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(v map[string]any) { lmtest.WriteSSE(w, v["type"].(string), mustJSON(v)) }
		msg := func(m map[string]any) map[string]any { return map[string]any{"message": m} }
		send(map[string]any{"id": "lmtest", "type": "message-start", "delta": msg(map[string]any{"role": "assistant", "content": []any{}, "tool_plan": "", "tool_calls": []any{}, "citations": []any{}})})
		index := 0
		content := func(kind string, chunks []string) {
			if len(chunks) == 0 {
				return
			}
			send(map[string]any{"type": "content-start", "index": index, "delta": msg(map[string]any{"content": map[string]any{"type": kind, kind: ""}})})
			for _, c := range chunks {
				send(map[string]any{"type": "content-delta", "index": index, "delta": msg(map[string]any{"content": map[string]any{kind: c}})})
			}
			send(map[string]any{"type": "content-end", "index": index})
			index++
		}
		content("thinking", s.Reasoning)
		content("text", s.Text)
		for i, tc := range s.ToolCalls {
			send(map[string]any{"type": "tool-call-start", "index": i, "delta": msg(map[string]any{"tool_calls": map[string]any{"id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": ""}}})})
			for _, p := range pieces(tc.Args, 3) {
				send(map[string]any{"type": "tool-call-delta", "index": i, "delta": msg(map[string]any{"tool_calls": map[string]any{"function": map[string]any{"arguments": p}}})})
			}
			send(map[string]any{"type": "tool-call-end", "index": i})
		}
		switch {
		case s.Stall:
			s.Hang(r)
			return
		case s.Truncate:
			lmtest.Abort(w)
		}
		send(map[string]any{"type": "message-end", "delta": map[string]any{
			"finish_reason": map[core.FinishReason]string{core.FinishStop: "COMPLETE", core.FinishToolCalls: "TOOL_CALL", core.FinishLength: "MAX_TOKENS"}[s.Finish],
			"usage":         map[string]any{"tokens": map[string]any{"input_tokens": s.Usage.InputTokens, "output_tokens": s.Usage.OutputTokens}},
		}})
	}
}
