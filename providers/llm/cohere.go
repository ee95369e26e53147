package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"strings"

	"github.com/breadai/bread/core"
)

// CohereOptions configure the Cohere adapter. The key comes from
// COHERE_API_KEY and the endpoint from COHERE_BASE_URL unless set here.
//
// The adapter speaks Cohere's v2 chat streaming API directly (a small SSE
// client) rather than through cohere-go: the SDK's retrier and stream
// wrapper hide the response status and headers bread maps to error codes,
// and a hand-written reader lets the stream-cut and early-stop paths be
// exact and fuzzed.
type CohereOptions struct {
	ClientOptions
}

const cohereDefaultBaseURL = "https://api.cohere.com"

// NewCohere returns the factory for Cohere's Command models.
func NewCohere(opts CohereOptions) core.ProviderFactory {
	return perModel(func(modelID string) (core.LanguageModel, error) {
		const name = "cohere"
		if strings.TrimSpace(modelID) == "" {
			return nil, configError(core.CodeInvalidConfig, name, "a model id is required")
		}
		key := opts.APIKey
		if key == "" {
			key = opts.Getenv.first("COHERE_API_KEY", "CO_API_KEY")
		}
		if key == "" {
			return nil, configError(core.CodeProviderAuth, name, "no API key: set COHERE_API_KEY or the APIKey option")
		}
		base := opts.BaseURL
		if base == "" {
			base = opts.Getenv.first("COHERE_BASE_URL")
		}
		if base == "" {
			base = cohereDefaultBaseURL
		}
		return &cohereModel{modelID: modelID, url: strings.TrimRight(base, "/") + "/v2/chat", key: key, client: opts.httpClient(), headers: opts.Headers}, nil
	})
}

type cohereModel struct {
	modelID string
	url     string
	key     string
	client  *http.Client
	headers map[string]string
}

// Stream implements core.LanguageModel.
func (m *cohereModel) Stream(ctx context.Context, req core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	return func(yield func(core.ModelEvent, error) bool) {
		body, err := m.body(req)
		if err != nil {
			yield(core.ModelEvent{}, err)
			return
		}
		hr, err := http.NewRequestWithContext(ctx, http.MethodPost, m.url, bytes.NewReader(body))
		if err != nil {
			yield(core.ModelEvent{}, configError(core.CodeInvalidConfig, "cohere", "bad endpoint: %v", redact(err.Error(), m.key)))
			return
		}
		hr.Header.Set("Authorization", "Bearer "+m.key)
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Accept", "text/event-stream")
		for k, v := range m.headers {
			hr.Header.Set(k, v)
		}
		resp, err := m.client.Do(hr)
		if err != nil {
			yield(core.ModelEvent{}, transportError(ctx, "cohere", err, m.key))
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode >= 300 {
			raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			var e struct {
				Message string `json:"message"`
			}
			text := string(raw)
			if json.Unmarshal(raw, &e) == nil && e.Message != "" {
				text = e.Message
			}
			yield(core.ModelEvent{}, httpFailure{provider: "cohere", status: resp.StatusCode, header: resp.Header, text: text}.breadError(m.key))
			return
		}
		var dec cohereDecoder
		sr := newSSEReader(resp.Body)
		for {
			_, data, err := sr.next()
			if err != nil {
				if err == io.EOF {
					break
				}
				yield(core.ModelEvent{}, transportErrorOrCut(ctx, "cohere", err, m.key))
				return
			}
			if !dec.decode(data, yield) {
				return
			}
			if dec.err != nil {
				yield(core.ModelEvent{}, dec.err)
				return
			}
		}
		if !dec.finished {
			if ctx.Err() != nil {
				yield(core.ModelEvent{}, ctx.Err())
				return
			}
			yield(core.ModelEvent{}, streamCut("cohere", nil))
			return
		}
		if !dec.calls.flush(yield) {
			return
		}
		yield(core.ModelEvent{Type: core.EventFinish, FinishReason: dec.reason, Usage: dec.usage}, nil)
	}
}

// transportErrorOrCut maps a read error in the middle of a body.
func transportErrorOrCut(ctx context.Context, provider string, err error, secrets ...string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, errSSETooLarge) {
		return httpFailure{provider: provider, text: err.Error()}.breadError(secrets...)
	}
	return streamCut(provider, err, secrets...)
}

// cohereEvent is the union of Cohere's v2 stream events; only the fields
// bread reads are declared.
type cohereEvent struct {
	Type  string `json:"type"`
	Index int64  `json:"index"`
	Delta struct {
		Message struct {
			// message-start sends content and tool_calls as empty
			// arrays; the delta events send one object.
			Content objectOnly[struct {
				Type     string `json:"type"`
				Text     string `json:"text"`
				Thinking string `json:"thinking"`
			}] `json:"content"`
			ToolPlan  string `json:"tool_plan"`
			ToolCalls objectOnly[struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			}] `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
		Error        string `json:"error"`
		Usage        struct {
			Tokens struct {
				InputTokens  float64 `json:"input_tokens"`
				OutputTokens float64 `json:"output_tokens"`
			} `json:"tokens"`
		} `json:"usage"`
	} `json:"delta"`
}

// objectOnly decodes a JSON object into V and ignores any other shape.
type objectOnly[T any] struct{ V T }

func (o *objectOnly[T]) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	return json.Unmarshal(b, &o.V)
}

// cohereDecoder turns Cohere stream events into model events.
type cohereDecoder struct {
	ev       cohereEvent
	calls    toolCallBuffer
	blocks   map[int64]*pendingCall
	finished bool
	reason   core.FinishReason
	usage    core.Usage
	err      error
}

// decode handles one event's data; it reports false when the consumer
// stopped, and sets d.err on a malformed or error event.
func (d *cohereDecoder) decode(data []byte, yield func(core.ModelEvent, error) bool) bool {
	d.ev = cohereEvent{}
	if err := json.Unmarshal(data, &d.ev); err != nil {
		d.err = httpFailure{provider: "cohere", text: "malformed stream event: " + err.Error()}.breadError()
		return true
	}
	ev := &d.ev
	msg := &ev.Delta.Message
	switch ev.Type {
	case "content-delta":
		if t := msg.Content.V.Thinking; t != "" {
			return yield(core.ModelEvent{Type: core.EventReasoningDelta, Delta: t}, nil)
		}
		if t := msg.Content.V.Text; t != "" {
			return yield(core.ModelEvent{Type: core.EventTextDelta, Delta: t}, nil)
		}
	case "tool-plan-delta":
		// The tool plan is the model's stated reasoning before it calls
		// tools.
		if msg.ToolPlan != "" {
			return yield(core.ModelEvent{Type: core.EventReasoningDelta, Delta: msg.ToolPlan}, nil)
		}
	case "tool-call-start":
		tc := &msg.ToolCalls.V
		c, _ := d.calls.start(ev.Index, tc.ID, tc.Function.Name)
		if d.blocks == nil {
			d.blocks = map[int64]*pendingCall{}
		}
		d.blocks[ev.Index] = c
		if !yield(core.ModelEvent{Type: core.EventToolInputStart, ToolCallID: c.id, ToolName: c.name}, nil) {
			return false
		}
		if a := tc.Function.Arguments; a != "" {
			c.args.WriteString(a)
			return yield(core.ModelEvent{Type: core.EventToolInputDelta, ToolCallID: c.id, ToolName: c.name, Delta: a}, nil)
		}
	case "tool-call-delta":
		c := d.blocks[ev.Index]
		if a := msg.ToolCalls.V.Function.Arguments; c != nil && a != "" {
			c.args.WriteString(a)
			return yield(core.ModelEvent{Type: core.EventToolInputDelta, ToolCallID: c.id, ToolName: c.name, Delta: a}, nil)
		}
	case "tool-call-end":
		if c := d.blocks[ev.Index]; c != nil && !c.ended {
			end, call := c.endEvents()
			return yield(end, nil) && yield(call, nil)
		}
	case "message-end":
		d.finished = true
		d.reason = cohereFinishReason(ev.Delta.FinishReason)
		if ev.Delta.Error != "" {
			d.err = httpFailure{provider: "cohere", text: ev.Delta.Error}.breadError()
		}
		u := ev.Delta.Usage.Tokens
		d.usage = core.Usage{InputTokens: int64(u.InputTokens), OutputTokens: int64(u.OutputTokens), TotalTokens: int64(u.InputTokens + u.OutputTokens)}
	}
	return true
}

func cohereFinishReason(r string) core.FinishReason {
	switch r {
	case "COMPLETE", "STOP_SEQUENCE":
		return core.FinishStop
	case "MAX_TOKENS":
		return core.FinishLength
	case "TOOL_CALL":
		return core.FinishToolCalls
	case "ERROR", "TIMEOUT":
		return core.FinishError
	default:
		return core.FinishOther
	}
}

// body builds the v2 chat request.
func (m *cohereModel) body(req core.ModelRequest) ([]byte, error) {
	type fn struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
		Arguments   *string         `json:"arguments,omitempty"`
	}
	type toolCall struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	type message struct {
		Role       string     `json:"role"`
		Content    any        `json:"content,omitempty"`
		ToolCalls  []toolCall `json:"tool_calls,omitempty"`
		ToolCallID string     `json:"tool_call_id,omitempty"`
	}
	body := map[string]any{"model": m.modelID, "stream": true}
	var msgs []message
	if req.System != "" {
		msgs = append(msgs, message{Role: "system", Content: req.System})
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case core.RoleSystem, core.RoleAssistant:
			out := message{Role: string(msg.Role)}
			var text strings.Builder
			for _, p := range msg.Parts {
				switch p.Type {
				case core.PartText:
					text.WriteString(p.Text)
				case core.PartToolCall:
					args := strings.TrimSpace(string(p.Input))
					if args == "" {
						args = "{}"
					}
					out.ToolCalls = append(out.ToolCalls, toolCall{ID: p.ToolCallID, Type: "function", Function: fn{Name: p.ToolName, Arguments: &args}})
				}
			}
			if text.Len() > 0 {
				out.Content = text.String()
			}
			msgs = append(msgs, out)
		default:
			var content []map[string]any
			for _, p := range msg.Parts {
				switch p.Type {
				case core.PartToolResult:
					msgs = append(msgs, message{Role: "tool", ToolCallID: p.ToolCallID, Content: toolResultText(p.Output)})
				case core.PartText:
					content = append(content, map[string]any{"type": "text", "text": p.Text})
				case core.PartFile:
					if !isImage(p.MediaType) {
						return nil, invalidRequest("cohere", "files of type %q are not supported (images are)", p.MediaType)
					}
					content = append(content, map[string]any{"type": "image_url", "image_url": map[string]any{"url": dataURL(p)}})
				}
			}
			if len(content) > 0 {
				msgs = append(msgs, message{Role: "user", Content: content})
			}
		}
	}
	body["messages"] = msgs
	if len(req.Tools) > 0 {
		var tools []map[string]any
		for _, t := range req.Tools {
			schema := json.RawMessage(t.InputSchema)
			if !json.Valid(schema) {
				return nil, invalidRequest("cohere", "tool %q has an invalid input schema", t.Name)
			}
			tools = append(tools, map[string]any{"type": "function", "function": fn{Name: t.Name, Description: t.Description, Parameters: schema}})
		}
		body["tools"] = tools
	}
	if req.Output != nil {
		if !json.Valid(req.Output.Schema) {
			return nil, invalidRequest("cohere", "the output schema is invalid")
		}
		// Cohere's JSON mode takes the schema natively.
		body["response_format"] = map[string]any{"type": "json_object", "json_schema": json.RawMessage(req.Output.Schema)}
	}
	s := req.Settings
	setIf := func(k string, v any, ok bool) {
		if ok {
			body[k] = v
		}
	}
	if s.MaxOutputTokens != nil {
		body["max_tokens"] = *s.MaxOutputTokens
	}
	if s.Temperature != nil {
		body["temperature"] = *s.Temperature
	}
	if s.TopP != nil {
		body["p"] = *s.TopP
	}
	if s.TopK != nil {
		body["k"] = *s.TopK
	}
	if s.PresencePenalty != nil {
		body["presence_penalty"] = *s.PresencePenalty
	}
	if s.FrequencyPenalty != nil {
		body["frequency_penalty"] = *s.FrequencyPenalty
	}
	if s.Seed != nil {
		body["seed"] = *s.Seed
	}
	setIf("stop_sequences", s.StopSequences, len(s.StopSequences) > 0)
	for k, v := range req.ProviderOptions {
		body[k] = v
	}
	return json.Marshal(body)
}
