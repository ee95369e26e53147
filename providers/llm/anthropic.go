package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"iter"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
	"github.com/breadai/bread/core"
)

// AnthropicOptions configure the Anthropic Messages adapter. The key comes
// from ANTHROPIC_API_KEY and the endpoint from ANTHROPIC_BASE_URL unless set
// here.
type AnthropicOptions struct {
	ClientOptions
	// DefaultMaxTokens is sent when a request sets no MaxOutputTokens: the
	// Messages API requires max_tokens. Zero is 4096.
	DefaultMaxTokens int
}

const anthropicDefaultBaseURL = "https://api.anthropic.com"

// NewAnthropic returns the factory for Anthropic's Claude models.
func NewAnthropic(opts AnthropicOptions) core.ProviderFactory {
	return perModel(func(modelID string) (core.LanguageModel, error) {
		const name = "anthropic"
		if strings.TrimSpace(modelID) == "" {
			return nil, configError(core.CodeInvalidConfig, name, "a model id is required")
		}
		key := opts.APIKey
		if key == "" {
			key = opts.Getenv.first("ANTHROPIC_API_KEY")
		}
		if key == "" {
			return nil, configError(core.CodeProviderAuth, name, "no API key: set ANTHROPIC_API_KEY or the APIKey option")
		}
		base := opts.BaseURL
		if base == "" {
			base = opts.Getenv.first("ANTHROPIC_BASE_URL")
		}
		if base == "" {
			base = anthropicDefaultBaseURL
		}
		reqOpts := []option.RequestOption{
			option.WithoutEnvironmentDefaults(),
			option.WithBaseURL(base),
			option.WithAPIKey(key),
			option.WithHTTPClient(opts.httpClient()),
			option.WithMaxRetries(0),
		}
		for k, v := range opts.Headers {
			reqOpts = append(reqOpts, option.WithHeader(k, v))
		}
		maxTokens := opts.DefaultMaxTokens
		if maxTokens <= 0 {
			maxTokens = 4096
		}
		client := anthropic.NewClient(reqOpts...)
		return &anthropicModel{modelID: modelID, svc: client.Messages, key: key, defaultMaxTokens: int64(maxTokens)}, nil
	})
}

type anthropicModel struct {
	modelID          string
	svc              anthropic.MessageService
	key              string
	defaultMaxTokens int64
}

// Stream implements core.LanguageModel.
func (m *anthropicModel) Stream(ctx context.Context, req core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	return func(yield func(core.ModelEvent, error) bool) {
		params, extra, err := m.params(req)
		if err != nil {
			yield(core.ModelEvent{}, err)
			return
		}
		stream := m.svc.NewStreaming(ctx, params, extra...)
		defer stream.Close()

		var (
			calls    toolCallBuffer
			blocks   = map[int64]*pendingCall{} // content-block index -> tool call
			usage    core.Usage
			reason   = core.FinishOther
			finished bool
		)
		for stream.Next() {
			ev := stream.Current()
			switch ev.Type {
			case "message_start":
				u := ev.Message.Usage
				usage.InputTokens = u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
				usage.OutputTokens = u.OutputTokens
			case "content_block_start":
				cb := &ev.ContentBlock
				switch cb.Type {
				case "tool_use", "server_tool_use":
					c, _ := calls.start(ev.Index, cb.ID, cb.Name)
					blocks[ev.Index] = c
					if !yield(core.ModelEvent{Type: core.EventToolInputStart, ToolCallID: cb.ID, ToolName: cb.Name}, nil) {
						return
					}
				case "text":
					if cb.Text != "" && !yield(core.ModelEvent{Type: core.EventTextDelta, Delta: cb.Text}, nil) {
						return
					}
				case "thinking":
					if cb.Thinking != "" && !yield(core.ModelEvent{Type: core.EventReasoningDelta, Delta: cb.Thinking}, nil) {
						return
					}
				}
			case "content_block_delta":
				d := &ev.Delta
				switch d.Type {
				case "text_delta":
					if !yield(core.ModelEvent{Type: core.EventTextDelta, Delta: d.Text}, nil) {
						return
					}
				case "thinking_delta":
					if !yield(core.ModelEvent{Type: core.EventReasoningDelta, Delta: d.Thinking}, nil) {
						return
					}
				case "input_json_delta":
					c := blocks[ev.Index]
					if c == nil || d.PartialJSON == "" {
						continue
					}
					c.args.WriteString(d.PartialJSON)
					if !yield(core.ModelEvent{Type: core.EventToolInputDelta, ToolCallID: c.id, ToolName: c.name, Delta: d.PartialJSON}, nil) {
						return
					}
				}
			case "content_block_stop":
				if c := blocks[ev.Index]; c != nil && !c.ended {
					end, call := c.endEvents()
					if !yield(end, nil) || !yield(call, nil) {
						return
					}
				}
			case "message_delta":
				if ev.Delta.StopReason != "" {
					reason = anthropicFinishReason(string(ev.Delta.StopReason))
				}
				if ev.Usage.JSON.OutputTokens.Valid() {
					usage.OutputTokens = ev.Usage.OutputTokens
				}
				if ev.Usage.JSON.InputTokens.Valid() && ev.Usage.InputTokens > 0 {
					usage.InputTokens = ev.Usage.InputTokens + ev.Usage.CacheCreationInputTokens + ev.Usage.CacheReadInputTokens
				}
			case "message_stop":
				finished = true
			}
		}
		if err := stream.Err(); err != nil {
			yield(core.ModelEvent{}, m.mapError(ctx, err))
			return
		}
		if !finished {
			if ctx.Err() != nil {
				yield(core.ModelEvent{}, ctx.Err())
				return
			}
			yield(core.ModelEvent{}, streamCut("anthropic", nil))
			return
		}
		if !calls.flush(yield) {
			return
		}
		usage.TotalTokens = usage.InputTokens + usage.OutputTokens
		yield(core.ModelEvent{Type: core.EventFinish, FinishReason: reason, Usage: usage}, nil)
	}
}

func anthropicFinishReason(r string) core.FinishReason {
	switch r {
	case "end_turn", "stop_sequence":
		return core.FinishStop
	case "max_tokens", "model_context_window_exceeded":
		return core.FinishLength
	case "tool_use":
		return core.FinishToolCalls
	case "refusal":
		return core.FinishContentFilter
	default:
		return core.FinishOther
	}
}

func (m *anthropicModel) mapError(ctx context.Context, err error) error {
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		f := httpFailure{provider: "anthropic", status: apiErr.StatusCode, vendor: string(apiErr.Type()), text: apiErr.Message}
		if apiErr.Response != nil {
			f.header = apiErr.Response.Header
		}
		if f.text == "" {
			f.text = apiErr.RawJSON()
		}
		return f.breadError(m.key)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if msg := err.Error(); strings.Contains(msg, "received error while streaming") {
		return httpFailure{provider: "anthropic", text: msg}.breadError(m.key)
	}
	return streamCut("anthropic", err, m.key)
}

// params maps bread's request to the Messages API.
//
// Structured output uses the API's native output_config.format
// (json_schema): the answer arrives as ordinary text deltas, so the port's
// "JSON arrives as text" holds and tools stay free for real tool calls. A
// forced tool would turn the answer into a tool call the runner would then
// have to unwrap.
func (m *anthropicModel) params(req core.ModelRequest) (anthropic.MessageNewParams, []option.RequestOption, error) {
	p := anthropic.MessageNewParams{Model: anthropic.Model(m.modelID), MaxTokens: m.defaultMaxTokens}
	var extra []option.RequestOption
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	for _, msg := range req.Messages {
		if msg.Role == core.RoleSystem {
			for _, part := range msg.Parts {
				if part.Type == core.PartText {
					p.System = append(p.System, anthropic.TextBlockParam{Text: part.Text})
				}
			}
			continue
		}
		assistant := msg.Role == core.RoleAssistant
		var blocks []anthropic.ContentBlockParamUnion
		for _, part := range msg.Parts {
			b, ok, err := anthropicBlock(part)
			if err != nil {
				return p, nil, err
			}
			if ok {
				blocks = append(blocks, b)
			}
		}
		if len(blocks) == 0 {
			continue
		}
		// The API wants alternating roles: fold a run of same-role
		// messages (a tool result then a user turn) into one.
		if n := len(p.Messages); n > 0 {
			last := &p.Messages[n-1]
			if assistant && last.OfAssistant != nil {
				last.OfAssistant.Content = append(last.OfAssistant.Content, blocks...)
				continue
			}
			if !assistant && last.OfUser != nil {
				last.OfUser.Content = append(last.OfUser.Content, blocks...)
				continue
			}
		}
		if assistant {
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(blocks...))
		} else {
			p.Messages = append(p.Messages, anthropic.NewUserMessage(blocks...))
		}
	}
	for _, t := range req.Tools {
		schema, err := schemaMap(t.InputSchema)
		if err != nil {
			return p, nil, invalidRequest("anthropic", "tool %q has an invalid input schema: %v", t.Name, err)
		}
		is := anthropic.ToolInputSchemaParam{Properties: schema["properties"], ExtraFields: map[string]any{}}
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok {
					is.Required = append(is.Required, s)
				}
			}
		}
		for k, v := range schema {
			if k != "properties" && k != "required" && k != "type" {
				is.ExtraFields[k] = v
			}
		}
		tp := anthropic.ToolParam{Name: t.Name, InputSchema: is}
		if t.Description != "" {
			tp.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tp})
	}
	if req.Output != nil {
		schema, err := schemaMap(req.Output.Schema)
		if err != nil {
			return p, nil, invalidRequest("anthropic", "the output schema is invalid: %v", err)
		}
		p.OutputConfig = anthropic.OutputConfigParam{Format: anthropic.JSONOutputFormatParam{Schema: schema}}
	}
	s := req.Settings
	if s.MaxOutputTokens != nil {
		p.MaxTokens = int64(*s.MaxOutputTokens)
	}
	if len(s.StopSequences) > 0 {
		p.StopSequences = s.StopSequences
	}
	// Sampling fields the typed parameters no longer carry.
	if s.Temperature != nil {
		extra = append(extra, option.WithJSONSet("temperature", *s.Temperature))
	}
	if s.TopP != nil {
		extra = append(extra, option.WithJSONSet("top_p", *s.TopP))
	}
	if s.TopK != nil {
		extra = append(extra, option.WithJSONSet("top_k", *s.TopK))
	}
	for k, v := range req.ProviderOptions {
		extra = append(extra, option.WithJSONSet(k, v))
	}
	return p, extra, nil
}

// anthropicBlock maps one part. Reasoning parts are dropped: replaying
// thinking needs the signature Anthropic issued, which bread's parts do not
// keep.
func anthropicBlock(p core.Part) (anthropic.ContentBlockParamUnion, bool, error) {
	switch p.Type {
	case core.PartText:
		if p.Text == "" {
			return anthropic.ContentBlockParamUnion{}, false, nil
		}
		return anthropic.NewTextBlock(p.Text), true, nil
	case core.PartToolCall:
		input := json.RawMessage(p.Input)
		if len(strings.TrimSpace(string(input))) == 0 {
			input = json.RawMessage("{}")
		}
		return anthropic.NewToolUseBlock(p.ToolCallID, input, p.ToolName), true, nil
	case core.PartToolResult:
		return anthropic.NewToolResultBlock(p.ToolCallID, toolResultText(p.Output), p.IsError), true, nil
	case core.PartFile:
		switch {
		case isImage(p.MediaType):
			if len(p.Data) == 0 {
				return anthropic.NewImageBlock(anthropic.URLImageSourceParam{URL: p.URL}), true, nil
			}
			return anthropic.NewImageBlockBase64(p.MediaType, base64.StdEncoding.EncodeToString(p.Data)), true, nil
		case p.MediaType == "application/pdf":
			if len(p.Data) == 0 {
				return anthropic.NewDocumentBlock(anthropic.URLPDFSourceParam{URL: p.URL}), true, nil
			}
			return anthropic.NewDocumentBlock(anthropic.Base64PDFSourceParam{Data: base64.StdEncoding.EncodeToString(p.Data)}), true, nil
		case strings.HasPrefix(p.MediaType, "text/") && len(p.Data) > 0:
			return anthropic.NewDocumentBlock(anthropic.PlainTextSourceParam{Data: string(p.Data)}), true, nil
		default:
			return anthropic.ContentBlockParamUnion{}, false, invalidRequest("anthropic", "files of type %q are not supported (images, PDF and text are)", p.MediaType)
		}
	}
	return anthropic.ContentBlockParamUnion{}, false, nil
}
