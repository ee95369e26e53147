package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"iter"
	"strings"

	"github.com/breadai/bread/core"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"
)

// OpenAIOptions configure the OpenAI Chat Completions adapter, which also
// serves every vendor that speaks the same API.
type OpenAIOptions struct {
	ClientOptions
	// Organization and Project set the OpenAI-Organization and
	// OpenAI-Project headers (openai only).
	Organization string
	Project      string
	// StrictJSONSchema sends strict: true with structured-output schemas and
	// tool parameters. Strict mode needs schemas that follow OpenAI's subset
	// (every property required, additionalProperties false), so it is off by
	// default.
	StrictJSONSchema bool
}

// openAIModel is one model behind a Chat Completions endpoint.
type openAIModel struct {
	vendor  *openAIVendor
	modelID string
	svc     openai.ChatCompletionService
	key     string
	strict  bool
}

func newOpenAIModel(v *openAIVendor, modelID string, key string, strict bool, reqOpts []option.RequestOption) *openAIModel {
	return &openAIModel{vendor: v, modelID: modelID, svc: openai.NewChatCompletionService(reqOpts...), key: key, strict: strict}
}

// Stream implements core.LanguageModel.
func (m *openAIModel) Stream(ctx context.Context, req core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
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
			finished bool
			reason   core.FinishReason
			usage    core.Usage
		)
		for stream.Next() {
			chunk := stream.Current()
			if chunk.JSON.Usage.Valid() {
				usage = core.Usage{InputTokens: chunk.Usage.PromptTokens, OutputTokens: chunk.Usage.CompletionTokens, TotalTokens: chunk.Usage.TotalTokens}
			}
			for i := range chunk.Choices {
				ch := &chunk.Choices[i]
				if ch.Index != 0 {
					continue // bread asks for one choice
				}
				d := &ch.Delta
				if r := reasoningDelta(d); r != "" {
					if !yield(core.ModelEvent{Type: core.EventReasoningDelta, Delta: r}, nil) {
						return
					}
				}
				if d.Content != "" {
					if !yield(core.ModelEvent{Type: core.EventTextDelta, Delta: d.Content}, nil) {
						return
					}
				}
				for j := range d.ToolCalls {
					tc := &d.ToolCalls[j]
					c, isNew := calls.start(tc.Index, tc.ID, tc.Function.Name)
					if isNew {
						if !yield(core.ModelEvent{Type: core.EventToolInputStart, ToolCallID: c.id, ToolName: c.name}, nil) {
							return
						}
					}
					if a := tc.Function.Arguments; a != "" {
						c.args.WriteString(a)
						if !yield(core.ModelEvent{Type: core.EventToolInputDelta, ToolCallID: c.id, ToolName: c.name, Delta: a}, nil) {
							return
						}
					}
				}
				if ch.FinishReason != "" {
					finished = true
					reason = openAIFinishReason(ch.FinishReason)
					if !calls.flush(yield) {
						return
					}
				}
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
			yield(core.ModelEvent{}, streamCut(m.vendor.name, nil))
			return
		}
		if reason == core.FinishStop && calls.len() > 0 {
			reason = core.FinishToolCalls
		}
		yield(core.ModelEvent{Type: core.EventFinish, FinishReason: reason, Usage: usage}, nil)
	}
}

// reasoningDelta reads the reasoning text OpenAI-compatible vendors add to
// a delta: reasoning_content (DeepSeek, Qwen, vLLM, xAI) or reasoning (Groq,
// OpenRouter, Ollama). OpenAI's own Chat Completions API has none.
func reasoningDelta(d *openai.ChatCompletionChunkChoiceDelta) string {
	if len(d.JSON.ExtraFields) == 0 {
		return ""
	}
	for _, k := range [...]string{"reasoning_content", "reasoning"} {
		f, ok := d.JSON.ExtraFields[k]
		if !ok {
			continue
		}
		raw := f.Raw()
		if len(raw) < 2 || raw[0] != '"' {
			continue
		}
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func openAIFinishReason(r string) core.FinishReason {
	switch r {
	case "stop", "end_turn", "eos":
		return core.FinishStop
	case "length", "max_tokens", "model_length":
		return core.FinishLength
	case "tool_calls", "function_call", "tool_use":
		return core.FinishToolCalls
	case "content_filter":
		return core.FinishContentFilter
	case "error":
		return core.FinishError
	default:
		return core.FinishOther
	}
}

func (m *openAIModel) mapError(ctx context.Context, err error) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		f := httpFailure{provider: m.vendor.name, status: apiErr.StatusCode, vendor: apiErr.Code, text: apiErr.Message}
		if apiErr.Response != nil {
			f.header = apiErr.Response.Header
		}
		if f.vendor == "" {
			f.vendor = apiErr.Type
		}
		if f.text == "" {
			f.text = apiErr.RawJSON()
		}
		return f.breadError(m.key)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// A mid-stream {"error": ...} event, or a body cut off part-way.
	msg := err.Error()
	if strings.Contains(msg, "received error while streaming") {
		return httpFailure{provider: m.vendor.name, text: strings.TrimPrefix(msg, "received error while streaming: ")}.breadError(m.key)
	}
	return streamCut(m.vendor.name, err, m.key)
}

// params maps bread's request to Chat Completions parameters; extra carries
// the fields the typed parameters do not have (top_k, provider options).
func (m *openAIModel) params(req core.ModelRequest) (openai.ChatCompletionNewParams, []option.RequestOption, error) {
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(m.modelID)}
	var extra []option.RequestOption
	system := req.System
	if req.Output != nil && m.vendor.structured == structuredJSONObject {
		// The vendor has JSON mode but no schemas: describe the schema in
		// the system prompt and ask for a JSON object.
		system = strings.TrimSpace(system + "\n\nAnswer with one JSON object that matches this JSON Schema:\n" + string(req.Output.Schema))
	}
	if system != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(system))
	}
	for _, msg := range req.Messages {
		ms, err := m.messages(msg)
		if err != nil {
			return p, nil, err
		}
		p.Messages = append(p.Messages, ms...)
	}
	for _, t := range req.Tools {
		schema, err := schemaMap(t.InputSchema)
		if err != nil {
			return p, nil, invalidRequest(m.vendor.name, "tool %q has an invalid input schema: %v", t.Name, err)
		}
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(schema)}
		if t.Description != "" {
			fn.Description = param.NewOpt(t.Description)
		}
		if m.strict {
			fn.Strict = param.NewOpt(true)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	if req.Output != nil {
		switch m.vendor.structured {
		case structuredJSONObject:
			p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
		case structuredJSONSchema:
			schema, err := schemaMap(req.Output.Schema)
			if err != nil {
				return p, nil, invalidRequest(m.vendor.name, "the output schema is invalid: %v", err)
			}
			js := shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: outputName(req.Output), Schema: schema}
			if req.Output.Description != "" {
				js.Description = param.NewOpt(req.Output.Description)
			}
			if m.strict {
				js.Strict = param.NewOpt(true)
			}
			p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: js}}
		}
	}
	s := req.Settings
	if s.MaxOutputTokens != nil {
		if m.vendor.maxCompletionTokens {
			p.MaxCompletionTokens = param.NewOpt(int64(*s.MaxOutputTokens))
		} else {
			p.MaxTokens = param.NewOpt(int64(*s.MaxOutputTokens))
		}
	}
	if s.Temperature != nil {
		p.Temperature = param.NewOpt(*s.Temperature)
	}
	if s.TopP != nil {
		p.TopP = param.NewOpt(*s.TopP)
	}
	if s.PresencePenalty != nil {
		p.PresencePenalty = param.NewOpt(*s.PresencePenalty)
	}
	if s.FrequencyPenalty != nil {
		p.FrequencyPenalty = param.NewOpt(*s.FrequencyPenalty)
	}
	if s.Seed != nil {
		p.Seed = param.NewOpt(*s.Seed)
	}
	if len(s.StopSequences) > 0 {
		p.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: s.StopSequences}
	}
	if s.TopK != nil && m.vendor.topK {
		extra = append(extra, option.WithJSONSet("top_k", *s.TopK))
	}
	if m.vendor.streamUsage {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)}
	}
	for k, v := range req.ProviderOptions {
		extra = append(extra, option.WithJSONSet(k, v))
	}
	return p, extra, nil
}

// messages maps one bread message to one or more Chat Completions
// messages: tool results become one tool message each.
func (m *openAIModel) messages(msg core.Message) ([]openai.ChatCompletionMessageParamUnion, error) {
	var out []openai.ChatCompletionMessageParamUnion
	switch msg.Role {
	case core.RoleSystem:
		var b strings.Builder
		for _, p := range msg.Parts {
			if p.Type == core.PartText {
				b.WriteString(p.Text)
			}
		}
		return append(out, openai.SystemMessage(b.String())), nil
	case core.RoleAssistant:
		a := openai.ChatCompletionAssistantMessageParam{}
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
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: p.ToolCallID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: p.ToolName, Arguments: args},
				}})
			}
		}
		if text.Len() > 0 {
			a.Content = openai.ChatCompletionAssistantMessageParamContentUnion{OfString: param.NewOpt(text.String())}
		}
		return append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a}), nil
	default: // user and tool
		var parts []openai.ChatCompletionContentPartUnionParam
		onlyText := true
		for _, p := range msg.Parts {
			switch p.Type {
			case core.PartToolResult:
				out = append(out, openai.ToolMessage(toolResultText(p.Output), p.ToolCallID))
			case core.PartText:
				parts = append(parts, openai.TextContentPart(p.Text))
			case core.PartFile:
				onlyText = false
				part, err := m.filePart(p)
				if err != nil {
					return nil, err
				}
				parts = append(parts, part)
			}
		}
		if len(parts) == 0 {
			return out, nil
		}
		if onlyText {
			var b strings.Builder
			for _, p := range parts {
				b.WriteString(p.OfText.Text)
			}
			return append(out, openai.UserMessage(b.String())), nil
		}
		return append(out, openai.UserMessage(parts)), nil
	}
}

func (m *openAIModel) filePart(p core.Part) (openai.ChatCompletionContentPartUnionParam, error) {
	switch {
	case isImage(p.MediaType):
		return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: dataURL(p)}), nil
	case p.MediaType == "audio/wav" || p.MediaType == "audio/mpeg" || p.MediaType == "audio/mp3":
		if len(p.Data) == 0 {
			return openai.ChatCompletionContentPartUnionParam{}, invalidRequest(m.vendor.name, "audio input must carry its data, not a URL")
		}
		format := "wav"
		if p.MediaType != "audio/wav" {
			format = "mp3"
		}
		return openai.InputAudioContentPart(openai.ChatCompletionContentPartInputAudioInputAudioParam{Data: base64.StdEncoding.EncodeToString(p.Data), Format: format}), nil
	default:
		if len(p.Data) == 0 {
			return openai.ChatCompletionContentPartUnionParam{}, invalidRequest(m.vendor.name, "a %s file must carry its data: Chat Completions takes only images by URL", p.MediaType)
		}
		f := openai.ChatCompletionContentPartFileFileParam{FileData: param.NewOpt(dataURL(p))}
		name := p.Filename
		if name == "" {
			name = "file"
		}
		f.Filename = param.NewOpt(name)
		return openai.FileContentPart(f), nil
	}
}
