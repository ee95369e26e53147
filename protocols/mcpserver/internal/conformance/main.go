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
	"syscall"

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

func (contentTools) Tools() []core.Tool {
	return []core.Tool{
		content("test_image_content", "Returns an image.", &mcp.ImageContent{Data: png, MIMEType: "image/png"}),
		content("test_audio_content", "Returns audio.", &mcp.AudioContent{Data: wav, MIMEType: "audio/wav"}),
		content("test_embedded_resource", "Returns an embedded resource.", &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}}),
		content("test_multiple_content_types", "Returns text, an image and a resource.",
			&mcp.TextContent{Text: "Multiple content types test:"},
			&mcp.ImageContent{Data: png, MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}}),
	}
}

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
	}
	p, err := mcpserver.New(mcpserver.Options{
		Agents: []string{"test_simple_text", "test_tool_with_progress", "test_error_handling", "json_schema_2020_12_tool"},
		Tools:  []mcpserver.ToolRef{{Tool: "test_image_content"}, {Tool: "test_audio_content"}, {Tool: "test_embedded_resource"}, {Tool: "test_multiple_content_types"}},
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
	srv, err := server.New(in, server.Options{Host: "localhost", Port: port, Logger: log})
	if err != nil {
		return err
	}
	return srv.ListenAndServe(ctx)
}
