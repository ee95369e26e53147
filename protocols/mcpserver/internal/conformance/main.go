// Command conformance serves a bread project built for the official MCP
// conformance suite (npm @modelcontextprotocol/conformance): every tool the
// suite's tools scenarios call, exposed by the mcpserver plugin at /mcp on
// bread's own HTTP server. Agents answer from scripted models; the content
// kinds an agent does not produce (images, audio, embedded resources) come
// from tools exposed directly. See conformance.sh beside the plugin.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/core/stream"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/protocols/mcpserver"
	"github.com/breadai/bread/server"
)

func main() {
	port := flag.Int("port", 3000, "port to listen on (localhost)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *port); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

// quietBus is the in-process bus; the project serves no streaming routes,
// only /mcp.
type quietBus struct{ core.BreadBus }

func (quietBus) Mount(core.Router, core.Runtime) {}

// scripted answers every run the same way: call tool (when set) in the
// first turn, then answer text.
type scripted struct {
	tool   string
	text   string
	failed error
}

func (m scripted) Stream(ctx context.Context, req core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	turn := modeltest.Text(m.text)
	switch {
	case m.failed != nil:
		turn = modeltest.Fail(m.failed)
	case m.tool != "" && !answered(req):
		turn = modeltest.ToolCall(m.tool, map[string]any{})
	}
	return modeltest.New(turn).Stream(ctx, req)
}

func answered(req core.ModelRequest) bool {
	if n := len(req.Messages); n > 0 {
		for _, p := range req.Messages[n-1].Parts {
			if p.Type == core.PartToolResult {
				return true
			}
		}
	}
	return false
}

func agent(id string, m scripted, schema string) *core.Agent {
	return &core.Agent{
		ID: id, Description: "Conformance agent " + id + ".",
		Model:       core.ModelRef{Provider: "scripted", Model: id},
		Providers:   core.ProviderRegistry{"scripted": func(string) (core.LanguageModel, error) { return m, nil }},
		InputSchema: json.RawMessage(schema),
	}
}

// contentTools contributes the tools whose results are MCP content blocks.
type contentTools struct{}

func (contentTools) Name() string { return "conformance" }

// A 1x1 red PNG and a minimal WAV header.
var (
	png = []byte{0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53, 0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x08, 0xd7, 0x63, 0xf8, 0xcf, 0xc0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xdd, 0x8d, 0xb0, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82}
	wav = []byte("RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x44\xac\x00\x00\x88\x58\x01\x00\x02\x00\x10\x00data\x00\x00\x00\x00")
)

func content(name, desc string, blocks ...mcp.Content) core.Tool {
	return core.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage, core.ToolContext) (any, error) { return blocks, nil }}
}

// reconnection closes the call's SSE stream before it answers (SEP-1699
// polling): the client reconnects with Last-Event-ID and reads the result
// from the session's event store.
func reconnection() core.Tool {
	return core.Tool{Name: "test_reconnection", Description: "Closes the SSE stream mid-call; the result arrives after the client reconnects.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(ctx context.Context, _ json.RawMessage, _ core.ToolContext) (any, error) {
			if req := mcpserver.RequestFrom(ctx); req != nil && req.Extra != nil && req.Extra.CloseSSEStream != nil {
				req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 100 * time.Millisecond})
			}
			return "Reconnection test completed", nil
		}}
}

func (contentTools) Tools() []core.Tool {
	return []core.Tool{
		reconnection(),
		content("test_image_content", "Returns an image.", &mcp.ImageContent{Data: png, MIMEType: "image/png"}),
		content("test_audio_content", "Returns audio.", &mcp.AudioContent{Data: wav, MIMEType: "audio/wav"}),
		content("test_embedded_resource", "Returns an embedded resource.", &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}}),
		content("test_multiple_content_types", "Returns text, an image and a resource.",
			&mcp.TextContent{Text: "Multiple content types test:"},
			&mcp.ImageContent{Data: png, MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}}),
	}
}

// prompted is an agent whose instructions and input schema make an MCP
// prompt of its name (the plugin declares one per exposed agent).
func prompted(id, prompt, input string) *core.Agent {
	a := agent(id, scripted{text: "ok"}, input)
	a.Prompt = prompt
	if input == "" {
		a.InputSchema = nil
	}
	return a
}

// fixtures adds, through the SDK server the plugin built, the resources and
// prompts whose content the suite fixes and a bread project does not
// produce: static text and binary resources, a template, and prompts
// carrying an embedded resource and an image.
func fixtures(s *mcp.Server) {
	s.AddResource(&mcp.Resource{URI: "test://static-text", Name: "static-text", Description: "A static text resource.", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "This is the content of the static text resource."}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://static-binary", Name: "static-binary", Description: "A static PNG.", MIMEType: "image/png"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: png}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource to subscribe to.", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "watched"}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template", Description: "A template.", MIMEType: "application/json"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimSuffix(strings.TrimPrefix(req.Params.URI, "test://template/"), "/data")
			b, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt embedding a resource.", Arguments: []*mcp.PromptArgument{{Name: "resourceUri", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."}}},
				{Role: "user", Content: &mcp.TextContent{Text: "Please process the embedded resource above."}},
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.ImageContent{Data: png, MIMEType: "image/png"}},
				{Role: "user", Content: &mcp.TextContent{Text: "Please analyze the image above."}},
			}}, nil
		})
}

// sampling is test_sampling: an agent on the mcp-sampling provider, so its
// one model turn is the client's sampling/createMessage.
func sampling() *core.Agent {
	a := agent("test_sampling", scripted{}, `{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}`)
	a.Model = core.ModelRef{Provider: mcpserver.SamplingProvider, Model: "host"}
	a.Providers = core.ProviderRegistry{mcpserver.SamplingProvider: mcpserver.Sampling()}
	return a
}

// asking is an agent whose model calls its human tool "ask" (answer schema
// answer) with no arguments, then answers text: the run reaches
// human:required, which the plugin asks of the client through elicitation.
func asking(id, prompt, answer, input string) *core.Agent {
	a := agent(id, scripted{tool: "human_ask", text: "Elicitation completed: action=accept"}, input)
	a.HumanTools = []core.HumanToolDef{{Name: "ask", Prompt: prompt, Schema: json.RawMessage(answer)}}
	return a
}

const (
	elicitUser     = `{"type":"object","properties":{"username":{"type":"string","description":"Your username"},"email":{"type":"string","format":"email","description":"Your email address"}},"required":["username","email"]}`
	elicitDefaults = `{"type":"object","properties":{"name":{"type":"string","default":"John Doe"},"age":{"type":"integer","default":30},"score":{"type":"number","default":95.5},"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},"verified":{"type":"boolean","default":true}}}`
	elicitEnums    = `{"type":"object","properties":{` +
		`"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},` +
		`"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
		`"legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},` +
		`"untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},` +
		`"titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`
)

const schema2020 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"}},"additionalProperties":false}`

func run(ctx context.Context, port int) error {
	step := core.Tool{Name: "step", Description: "One step of work.", Execute: func(context.Context, json.RawMessage, core.ToolContext) (any, error) { return "stepped", nil }}
	progress := agent("test_tool_with_progress", scripted{tool: "tool_step", text: "Progress test completed."}, `{"type":"object"}`)
	progress.Tools = []core.Tool{step}
	agents := []*core.Agent{
		agent("test_simple_text", scripted{text: "This is a simple text response for testing."}, `{"type":"object"}`),
		progress,
		agent("test_error_handling", scripted{failed: &core.BreadError{Code: core.CodeAgentError, Message: "This tool intentionally returns an error for testing"}}, `{"type":"object"}`),
		agent("json_schema_2020_12_tool", scripted{text: "ok"}, schema2020),
		sampling(),
		prompted("test_simple_prompt", "This is a simple prompt for testing.", ""),
		prompted("test_prompt_with_arguments", "Prompt with arguments.", `{"type":"object","properties":{"arg1":{"type":"string","description":"First test argument","enum":["testValue1","paris","park","party"]},"arg2":{"type":"string","description":"Second test argument"}},"required":["arg1","arg2"]}`),
		agent("test_tool_with_logging", scripted{text: "Logging test completed."}, `{"type":"object"}`),
		asking("test_elicitation", "Please provide your information", elicitUser, `{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`),
		asking("test_elicitation_sep1034_defaults", "Please review the defaults", elicitDefaults, `{"type":"object"}`),
		asking("test_elicitation_sep1330_enums", "Please pick options", elicitEnums, `{"type":"object"}`),
	}
	p, err := mcpserver.New(mcpserver.Options{
		Agents: []string{"test_simple_text", "test_tool_with_progress", "test_error_handling", "json_schema_2020_12_tool",
			"test_sampling", "test_simple_prompt", "test_prompt_with_arguments", "test_tool_with_logging", "test_elicitation", "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums"},
		Tools: []mcpserver.ToolRef{{Tool: "test_reconnection"}, {Tool: "test_image_content"}, {Tool: "test_audio_content"}, {Tool: "test_embedded_resource"}, {Tool: "test_multiple_content_types"}},
	})
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	in, err := engine.New(engine.Config{Store: memory.New(), Bus: quietBus{stream.New(stream.Options{})}, Agents: agents, Plugins: []core.BreadPlugin{contentTools{}, p}, Logger: log})
	if err != nil {
		return err
	}
	if err := in.Start(ctx); err != nil {
		return err
	}
	defer in.Stop(context.WithoutCancel(ctx))
	fixtures(p.Server())
	srv, err := server.New(in, server.Options{Host: "localhost", Port: port, Logger: log})
	if err != nil {
		return err
	}
	return srv.ListenAndServe(ctx)
}
