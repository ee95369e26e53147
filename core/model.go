package core

import (
	"context"
	"encoding/json"
	"iter"
)

// LanguageModel is the model port. The runner speaks only this; provider
// adapters translate a vendor's API to it.
//
// Stream starts one model call and yields its events in order. The sequence
// ends after a finish event, after an error (yielded as the second value, with
// a zero event), or when the consumer stops ranging. A cancelled ctx stops the
// call and yields ctx's error. Implementations release every connection when
// the range ends, however it ends.
type LanguageModel interface {
	Stream(ctx context.Context, req ModelRequest) iter.Seq2[ModelEvent, error]
}

// ModelRequest is one model call: the conversation, the tools the model may
// call, and an optional structured-output schema.
type ModelRequest struct {
	System   string
	Messages []Message
	Tools    []ToolSpec
	// Output, when set, asks for a JSON answer matching its schema, through
	// the API's native structured output where it has one. The JSON arrives as
	// text deltas.
	Output   *OutputSpec
	Settings ModelSettings
	// ProviderOptions are vendor-specific knobs, passed through unvalidated.
	ProviderOptions map[string]any
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// OutputSpec asks for structured output.
type OutputSpec struct {
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
}

// ModelSettings are the sampling options every provider understands. Nil
// fields are left to the provider's default.
type ModelSettings struct {
	MaxOutputTokens  *int     `json:"maxOutputTokens,omitempty"`
	Temperature      *float64 `json:"temperature,omitempty"`
	TopP             *float64 `json:"topP,omitempty"`
	TopK             *int     `json:"topK,omitempty"`
	PresencePenalty  *float64 `json:"presencePenalty,omitempty"`
	FrequencyPenalty *float64 `json:"frequencyPenalty,omitempty"`
	StopSequences    []string `json:"stopSequences,omitempty"`
	Seed             *int64   `json:"seed,omitempty"`
}

// Message is one turn of a conversation in bread's provider-neutral form. The
// same form is what the runner persists as a session message's content.
type Message struct {
	Role  MessageRole `json:"role"`
	Parts []Part      `json:"parts"`
}

// PartType discriminates message parts.
type PartType string

// The part types.
const (
	PartText       PartType = "text"
	PartReasoning  PartType = "reasoning"
	PartToolCall   PartType = "tool-call"
	PartToolResult PartType = "tool-result"
	PartFile       PartType = "file"
)

// Part is one piece of a message. Which fields are set depends on Type:
// text and reasoning use Text; tool-call uses ToolCallID, ToolName and Input;
// tool-result uses ToolCallID, ToolName, Output and IsError; file uses
// MediaType with Data or URL, and Filename.
type Part struct {
	Type       PartType        `json:"type"`
	Text       string          `json:"text,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	ToolName   string          `json:"toolName,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Output     json.RawMessage `json:"output,omitempty"`
	IsError    bool            `json:"isError,omitempty"`
	MediaType  string          `json:"mediaType,omitempty"`
	Data       []byte          `json:"data,omitempty"`
	URL        string          `json:"url,omitempty"`
	Filename   string          `json:"filename,omitempty"`
}

// TextPart returns a text part.
func TextPart(s string) Part { return Part{Type: PartText, Text: s} }

// ModelEventType discriminates model events.
type ModelEventType string

// The model event types.
const (
	EventTextDelta      ModelEventType = "text-delta"
	EventReasoningDelta ModelEventType = "reasoning-delta"
	EventToolInputStart ModelEventType = "tool-input-start"
	EventToolInputDelta ModelEventType = "tool-input-delta"
	EventToolInputEnd   ModelEventType = "tool-input-end"
	// EventToolCall carries a complete tool call. A provider that streams
	// arguments still sends it after tool-input-end.
	EventToolCall ModelEventType = "tool-call"
	EventFile     ModelEventType = "file"
	EventFinish   ModelEventType = "finish"
)

// ModelEvent is one streamed event of a model call. It is a flat value so a
// provider can yield thousands per call without allocating.
type ModelEvent struct {
	Type ModelEventType
	// Delta is the text of text, reasoning and tool-input deltas.
	Delta      string
	ToolCallID string
	ToolName   string
	// Input is a complete tool call's JSON arguments.
	Input json.RawMessage
	// File is a file the model generated.
	File *GeneratedFile
	// FinishReason and Usage are set on the finish event.
	FinishReason FinishReason
	Usage        Usage
}

// GeneratedFile is a file produced by the model itself.
type GeneratedFile struct {
	MediaType string
	Data      []byte
	Name      string
}

// FinishReason says why a model call stopped.
type FinishReason string

// The finish reasons.
const (
	FinishStop          FinishReason = "stop"
	FinishLength        FinishReason = "length"
	FinishToolCalls     FinishReason = "tool-calls"
	FinishContentFilter FinishReason = "content-filter"
	FinishError         FinishReason = "error"
	FinishOther         FinishReason = "other"
)
