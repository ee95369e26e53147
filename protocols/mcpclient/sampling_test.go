//lint:file-ignore SA1019 the test server samples as servers still do (deprecated from 2026-07-28 on)

package mcpclient_test

import (
	"context"
	"iter"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/protocols/mcpclient"
)

// summaryServer's tool asks the client's model for a summary (a sampling
// input request; the SDK sends older clients sampling/createMessage) and
// returns it, or the refusal it got.
func summaryServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "writer", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "summarize"}, func(_ context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		resp, ok := req.Params.InputResponses["summary"]
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"summary": &mcp.CreateMessageParams{
				SystemPrompt: "You summarize.", MaxTokens: 50,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: a.Text}}},
			}}}, nil, nil
		}
		var text string
		switch r := resp.(type) {
		case *mcp.CreateMessageResult:
			if t, ok := r.Content.(*mcp.TextContent); ok {
				text = "summary by " + r.Model + ": " + t.Text
			}
		case *mcp.CreateMessageWithToolsResult:
			for _, c := range r.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					text = "summary by " + r.Model + ": " + t.Text
				}
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	return s
}

// samplingModel is the agents' model: it calls the summarize tool, ends
// once the tool answered, and answers a sampling request (the server's
// system prompt) with a fixed summary, recording what it was asked.
type samplingModel struct {
	mu      sync.Mutex
	sampled []core.ModelRequest
}

func (m *samplingModel) Registry(provider string) core.ProviderRegistry {
	return core.ProviderRegistry{provider: func(string) (core.LanguageModel, error) { return m, nil }}
}

func (m *samplingModel) Stream(ctx context.Context, req core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	if req.System == "You summarize." {
		m.mu.Lock()
		m.sampled = append(m.sampled, req)
		m.mu.Unlock()
		return modeltest.New(modeltest.Text("bread is good")).Stream(ctx, req)
	}
	turn := modeltest.ToolCall("plugin_mcp_client_writer__summarize", map[string]string{"text": "a long text about bread"})
	if n := len(req.Messages); n > 0 {
		for _, p := range req.Messages[n-1].Parts {
			if p.Type == core.PartToolResult {
				turn = modeltest.Text("ok")
			}
		}
	}
	return modeltest.New(turn).Stream(ctx, req)
}

// TestSampling: a server samples the calling agent's own model only when
// that agent allows the server; another agent on the same server is
// refused, with an error the call reports; on both protocol revisions.
func TestSampling(t *testing.T) {
	for _, protocol := range []string{"", "2025-11-25"} {
		t.Run("protocol "+protocol, func(t *testing.T) {
			srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return summaryServer() }, &mcp.StreamableHTTPOptions{Stateless: protocol == ""}))
			t.Cleanup(srv.Close)
			p, err := mcpclient.New(mcpclient.Options{Servers: []mcpclient.Server{{Name: "writer", URL: srv.URL, ProtocolVersion: protocol}}})
			if err != nil {
				t.Fatal(err)
			}
			model := &samplingModel{}
			in := start(t, p, model,
				agentWith("allowed", mcpclient.AgentConfig{Servers: []string{"writer"}, Sampling: []string{"writ*"}}),
				agentWith("denied", mcpclient.AgentConfig{Servers: []string{"writer"}}))

			cs, err := run(t, in, "allowed", "summarize")
			if err != nil {
				t.Fatal(err)
			}
			res := find[*core.ToolResult](cs)
			if len(res) != 1 || res[0].Result != "summary by scripted:m: bread is good" {
				t.Fatalf("the server's tool answers with the agent's model's text: %s (%v)", mustJSON(t, res), crumbTypes(cs))
			}
			model.mu.Lock()
			if len(model.sampled) != 1 || len(model.sampled[0].Tools) != 0 || mustJSON(t, model.sampled[0].Messages) != `[{"role":"user","parts":[{"type":"text","text":"a long text about bread"}]}]` ||
				model.sampled[0].Settings.MaxOutputTokens == nil || *model.sampled[0].Settings.MaxOutputTokens != 50 {
				t.Errorf("the model is asked what the server sent: %s", mustJSON(t, model.sampled))
			}
			model.mu.Unlock()

			cs, err = run(t, in, "denied", "summarize")
			if err != nil {
				t.Fatal(err)
			}
			if len(find[*core.ToolResult](cs)) != 0 || len(find[*core.ToolError](cs)) != 1 {
				t.Fatalf("a refused sampling fails the call: %v", crumbTypes(cs))
			}
			model.mu.Lock()
			defer model.mu.Unlock()
			if len(model.sampled) != 1 {
				t.Errorf("the refused agent's model was sampled")
			}
		})
	}
}

// TestSamplingNotDeclaredByDefault: with no agent allowing it, the client
// does not declare sampling and the server's own SDK refuses.
func TestSamplingNotDeclaredByDefault(t *testing.T) {
	var declared bool
	var mu sync.Mutex
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		s := summaryServer()
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if p, ok := req.GetParams().(*mcp.InitializeParams); ok && p.Capabilities != nil {
					mu.Lock()
					declared = declared || p.Capabilities.Sampling != nil || p.Capabilities.Elicitation != nil
					mu.Unlock()
				}
				return next(ctx, method, req)
			}
		})
		return s
	}, &mcp.StreamableHTTPOptions{}))
	t.Cleanup(srv.Close)
	p, err := mcpclient.New(mcpclient.Options{Servers: []mcpclient.Server{{Name: "writer", URL: srv.URL, ProtocolVersion: "2025-11-25"}}})
	if err != nil {
		t.Fatal(err)
	}
	model := &samplingModel{}
	in := start(t, p, model, agentWith("plain", mcpclient.AgentConfig{Servers: []string{"writer"}}))
	cs, err := run(t, in, "plain", "summarize")
	if err != nil {
		t.Fatal(err)
	}
	if len(find[*core.ToolError](cs)) != 1 || len(model.sampled) != 0 {
		t.Fatalf("no sampling: %v", crumbTypes(cs))
	}
	mu.Lock()
	defer mu.Unlock()
	if declared {
		t.Error("the client declared sampling or elicitation nobody configured")
	}
}
