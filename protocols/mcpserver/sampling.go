//lint:file-ignore SA1019 sampling is deprecated from MCP 2026-07-28 on (SEP-2577), and still part of it during the deprecation window and on older revisions, which clients speak

package mcpserver

import (
	"context"
	"encoding/json"
	"iter"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

// SamplingProvider is the provider name of a model that runs on the MCP
// host's own model: an agent declared `model: {provider: mcp-sampling}` and
// served over MCP asks the client of the call (sampling/createMessage) for
// each of its model turns.
const SamplingProvider = "mcp-sampling"

// CodeSamplingUnavailable answers a model turn on mcp-sampling that has no
// MCP client to ask: a run started outside a tools/call, a client without
// the sampling capability, or a 2025-11-25 request without a session
// (which can neither receive a request nor retry with an answer).
const CodeSamplingUnavailable = "MCP_SAMPLING_UNAVAILABLE"

// DefaultSamplingMaxTokens bounds a sampled turn when the agent sets no
// maxOutputTokens (MCP requires a bound).
const DefaultSamplingMaxTokens = 4096

// Sampling is the provider factory of SamplingProvider, for a
// core.ProviderRegistry (the bread CLI registers it). The model id, unless
// empty or "host", is sent as the host's model hint.
func Sampling() core.ProviderFactory {
	return func(modelID string) (core.LanguageModel, error) { return samplingModel{hint: modelID}, nil }
}

type samplingModel struct{ hint string }

// Stream asks the client of the MCP call in ctx (RequestFrom) for one
// message. The agent's tools are offered when the client declared
// sampling.tools, and a tool_use answer is a tool call like any model's;
// without it the host answers text.
func (m samplingModel) Stream(ctx context.Context, req core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	return func(yield func(core.ModelEvent, error) bool) {
		call := RequestFrom(ctx)
		ask, tools, err := samplingSession(ctx, call)
		if err != nil {
			yield(core.ModelEvent{}, err)
			return
		}
		params := samplingParams(req, m.hint, tools)
		res, err := ask(ctx, params)
		if err != nil {
			if ctx.Err() != nil {
				yield(core.ModelEvent{}, ctx.Err())
				return
			}
			yield(core.ModelEvent{}, &core.BreadError{Code: core.CodeProviderError, Message: "the MCP client's sampling failed: " + err.Error(), Cause: err})
			return
		}
		finish := core.FinishStop
		for _, c := range res.Content {
			switch v := c.(type) {
			case *mcp.TextContent:
				if !yield(core.ModelEvent{Type: core.EventTextDelta, Delta: v.Text}, nil) {
					return
				}
			case *mcp.ToolUseContent:
				in, _ := json.Marshal(v.Input)
				if v.Input == nil {
					in = json.RawMessage(`{}`)
				}
				finish = core.FinishToolCalls
				if !yield(core.ModelEvent{Type: core.EventToolCall, ToolCallID: v.ID, ToolName: v.Name, Input: in}, nil) {
					return
				}
			case *mcp.ImageContent:
				if !yield(core.ModelEvent{Type: core.EventFile, File: &core.GeneratedFile{MediaType: v.MIMEType, Data: v.Data}}, nil) {
					return
				}
			}
		}
		if res.StopReason == "maxTokens" {
			finish = core.FinishLength
		}
		yield(core.ModelEvent{Type: core.EventFinish, FinishReason: finish}, nil)
	}
}

// asker sends one sampling request to the host.
type asker func(context.Context, *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error)

// samplingSession is what asks the host of a call: its session's
// sampling/createMessage, or on 2026-07-28 an input_required result the
// client answers with its retry (hostTurns); and whether it takes tools.
func samplingSession(ctx context.Context, call *mcp.CallToolRequest) (asker, bool, error) {
	unavailable := func(why string) (asker, bool, error) {
		return nil, false, &core.BreadError{Code: CodeSamplingUnavailable, Message: "the " + SamplingProvider + " provider cannot ask the MCP client: " + why}
	}
	if call == nil || call.Session == nil {
		return unavailable("the run does not serve an MCP tools/call (run the agent through the mcpserver plugin)")
	}
	ip := call.Session.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Sampling == nil {
		return unavailable("the client did not declare the sampling capability")
	}
	tools := ip.Capabilities.Sampling.Tools != nil
	if ip.ProtocolVersion >= roundTripVersion {
		if h := hostTurnsFrom(ctx); h != nil {
			return h.ask, tools, nil
		}
		return unavailable("the run does not serve this tools/call's agent run (a 2026-07-28 host answers through the call's retry)")
	}
	if call.Extra != nil && call.Extra.Header != nil && call.Extra.Header.Get(statelessHeader) != "" {
		return unavailable("a 2025-11-25 request without a session cannot carry sampling/createMessage, nor retry (use stdio, a stateful session, or 2026-07-28)")
	}
	return call.Session.CreateMessageWithTools, tools, nil
}

// samplingParams translates a model request: the system prompt, the
// conversation (text, images, tool calls and results), the agent's tools
// when the client takes them, and the settings MCP has.
func samplingParams(req core.ModelRequest, hint string, tools bool) *mcp.CreateMessageWithToolsParams {
	p := &mcp.CreateMessageWithToolsParams{SystemPrompt: req.System, MaxTokens: DefaultSamplingMaxTokens, IncludeContext: "none"}
	if s := req.Settings; s.MaxOutputTokens != nil && *s.MaxOutputTokens > 0 {
		p.MaxTokens = int64(*s.MaxOutputTokens)
	}
	if req.Settings.Temperature != nil {
		p.Temperature = *req.Settings.Temperature
	}
	p.StopSequences = req.Settings.StopSequences
	if hint != "" && hint != "host" {
		p.ModelPreferences = &mcp.ModelPreferences{Hints: []*mcp.ModelHint{{Name: hint}}}
	}
	if req.Output != nil && len(req.Output.Schema) > 0 {
		p.SystemPrompt = strings.TrimSpace(p.SystemPrompt + "\n\nAnswer with JSON only, matching this JSON Schema: " + string(req.Output.Schema))
	}
	if tools {
		for _, t := range req.Tools {
			p.Tools = append(p.Tools, &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
		}
	}
	for _, msg := range req.Messages {
		role := mcp.Role("user")
		if msg.Role == core.RoleAssistant {
			role = "assistant"
		}
		var content []mcp.Content
		for _, part := range msg.Parts {
			switch part.Type {
			case core.PartText:
				if part.Text != "" {
					content = append(content, &mcp.TextContent{Text: part.Text})
				}
			case core.PartFile:
				if strings.HasPrefix(part.MediaType, "image/") && len(part.Data) > 0 {
					content = append(content, &mcp.ImageContent{Data: part.Data, MIMEType: part.MediaType})
				}
			case core.PartToolCall:
				if !tools {
					content = append(content, &mcp.TextContent{Text: "(called " + part.ToolName + " with " + string(part.Input) + ")"})
					continue
				}
				var in map[string]any
				_ = json.Unmarshal(part.Input, &in)
				content = append(content, &mcp.ToolUseContent{ID: part.ToolCallID, Name: part.ToolName, Input: in})
			case core.PartToolResult:
				if !tools {
					content = append(content, &mcp.TextContent{Text: "(" + part.ToolName + " answered " + string(part.Output) + ")"})
					continue
				}
				content = append(content, &mcp.ToolResultContent{ToolUseID: part.ToolCallID, Content: []mcp.Content{&mcp.TextContent{Text: string(part.Output)}}, IsError: part.IsError})
			}
		}
		if len(content) == 0 {
			continue
		}
		// MCP alternates user and assistant: a tool message joins the
		// user side, and consecutive messages of one side merge.
		if n := len(p.Messages); n > 0 && p.Messages[n-1].Role == role {
			p.Messages[n-1].Content = append(p.Messages[n-1].Content, content...)
			continue
		}
		p.Messages = append(p.Messages, &mcp.SamplingMessageV2{Role: role, Content: content})
	}
	return p
}
