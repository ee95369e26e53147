package mcpclient_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/protocols/mcpclient"
)

// docsServer has a text resource, a binary one, a template and a prompt
// with an argument.
func docsServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	s.AddResource(&mcp.Resource{URI: "docs://readme", Name: "readme", MIMEType: "text/plain", Description: "The readme."}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "bread bakes agents"}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "docs://logo", Name: "logo", MIMEType: "image/png"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: pngPixel}}}, nil
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "docs://pages/{page}", Name: "page"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "a page"}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "summarize", Description: "Summarize a topic.", Arguments: []*mcp.PromptArgument{{Name: "topic", Required: true}}}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Description: "a summary", Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Summarize " + req.Params.Arguments["topic"] + "."}}}}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	return s
}

// TestResourcesAndPromptsAsTools: a server's resources and prompts are
// four tools under <server>__, each answering from the server.
func TestResourcesAndPromptsAsTools(t *testing.T) {
	srv := serveHTTP(t, docsServer(), nil)
	for _, tt := range []struct {
		tool string
		args any
		want string
	}{
		{"docs__resources_list", map[string]any{}, ""}, // checked by parts below
		{"docs__resources_read", map[string]any{"uri": "docs://readme"}, `"bread bakes agents"`},
		{"docs__resources_read", map[string]any{"uri": "docs://pages/intro"}, `"a page"`},
		{"docs__resources_read", map[string]any{"uri": "docs://logo"}, `{"contents":[{"uri":"docs://logo","mimeType":"image/png","blob":"iVBORw0KGgo="}]}`},
		{"docs__prompts_list", map[string]any{}, `{"prompts":[{"arguments":[{"name":"topic","required":true}],"description":"Summarize a topic.","name":"summarize"}]}`},
		{"docs__prompts_get", map[string]any{"name": "summarize", "arguments": map[string]string{"topic": "bread"}}, `{"description":"a summary","messages":[{"content":{"type":"text","text":"Summarize bread."},"role":"user"}]}`},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			p, err := mcpclient.New(mcpclient.Options{Servers: []mcpclient.Server{{Name: "docs", URL: srv.URL, Resources: true, Prompts: true}}})
			if err != nil {
				t.Fatal(err)
			}
			model := modeltest.New(modeltest.ToolCall("plugin_mcp_client_"+tt.tool, tt.args), modeltest.Text("ok"))
			in := start(t, p, model, agentWith("reader", mcpclient.AgentConfig{Servers: []string{"docs"}}))
			cs, err := run(t, in, "reader", "read")
			if err != nil {
				t.Fatal(err)
			}
			res := find[*core.ToolResult](cs)
			if len(res) != 1 {
				t.Fatalf("one tool:result: %v", crumbTypes(cs))
			}
			if got := mustJSON(t, res[0].Result); got != tt.want && tt.tool != "docs__resources_list" {
				t.Errorf("result\n got %s\nwant %s", got, tt.want)
			}
			if tt.tool == "docs__resources_list" {
				got := mustJSON(t, res[0].Result)
				for _, part := range []string{`"uri":"docs://readme"`, `"uri":"docs://logo"`, `"uriTemplate":"docs://pages/{page}"`} {
					if !strings.Contains(got, part) {
						t.Errorf("the listing lacks %s: %s", part, got)
					}
				}
			}
		})
	}
}

// TestResourcesAndPromptsOffered: the tools exist only when the
// declaration turns them on and the server has the feature, and a
// permission removes them like any tool.
func TestResourcesAndPromptsOffered(t *testing.T) {
	docs := serveHTTP(t, docsServer(), nil)
	toolsOnly := serveHTTP(t, testServer(), nil)
	for _, tt := range []struct {
		name   string
		server mcpclient.Server
		deny   []string
		want   []string
	}{
		{"off by default", mcpclient.Server{Name: "docs", URL: docs.URL}, nil, []string{"docs__echo"}},
		{"resources and prompts", mcpclient.Server{Name: "docs", URL: docs.URL, Resources: true, Prompts: true}, nil,
			[]string{"docs__echo", "docs__prompts_get", "docs__prompts_list", "docs__resources_list", "docs__resources_read"}},
		{"prompts denied", mcpclient.Server{Name: "docs", URL: docs.URL, Resources: true, Prompts: true}, []string{"plugin:mcp_client/docs__prompts_*"},
			[]string{"docs__echo", "docs__resources_list", "docs__resources_read"}},
		{"a server without them", mcpclient.Server{Name: "docs", URL: toolsOnly.URL, Resources: true, Prompts: true}, nil,
			[]string{"docs__chart", "docs__echo", "docs__fail", "docs__get_weather"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := mcpclient.New(mcpclient.Options{Servers: []mcpclient.Server{tt.server}})
			if err != nil {
				t.Fatal(err)
			}
			model := modeltest.New(modeltest.Text("ok"))
			a := agentWith("reader", mcpclient.AgentConfig{Servers: []string{"docs"}})
			a.Permissions = core.Permissions{Deny: tt.deny}
			in := start(t, p, model, a)
			if _, err := run(t, in, "reader", "hi"); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range model.Requests()[0].Tools {
				got = append(got, s.Name[len("plugin_mcp_client_"):])
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("tools %v, want %v", got, tt.want)
			}
		})
	}
}
