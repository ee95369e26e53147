//lint:file-ignore SA1019 sampling is deprecated from MCP 2026-07-28 on (SEP-2577), and still part of it during the deprecation window and on older revisions, which clients speak

package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/protocols/mcpserver"
)

// host is an MCP client's model: it answers each sampling request with the
// next of its replies and keeps the requests.
type host struct {
	mu      sync.Mutex
	asked   []*mcp.CreateMessageWithToolsParams
	replies [][]mcp.Content
}

func (h *host) sample(_ context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asked = append(h.asked, req.Params)
	reply := h.replies[min(len(h.asked), len(h.replies))-1]
	return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "host-model", Content: reply}, nil
}

func (h *host) requests() []*mcp.CreateMessageWithToolsParams {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*mcp.CreateMessageWithToolsParams(nil), h.asked...)
}

// An agent on provider mcp-sampling runs on the host's model: each turn is a
// sampling/createMessage to the client of the call, tools included when the
// client takes them (a tool_use is a tool call, its result goes back as a
// tool_result). On 2026-07-28 each turn is an input_required result the
// client's retry answers (the SDK client retries for you). A 2025-11-25
// request without a session can do neither: the run fails with
// MCP_SAMPLING_UNAVAILABLE.
func TestSamplingRunsOnTheHostModel(t *testing.T) {
	for _, via := range []string{"2025-11-25", "stdio", "2026-07-28", "sessionless 2025-11-25"} {
		t.Run(via, func(t *testing.T) {
			a := echo()
			a.Prompt = "You are terse."
			a.Model = core.ModelRef{Provider: mcpserver.SamplingProvider, Model: "claude"}
			a.Tools = []core.Tool{{Name: "lookup", Description: "Looks up.", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`),
				Execute: func(_ context.Context, in json.RawMessage, _ core.ToolContext) (any, error) {
					return "found " + string(in), nil
				}}}
			st := newStack(t, setup{agents: []*core.Agent{a}, opts: mcpserver.Options{Agents: []string{"echo"}, Stateless: via == "sessionless 2025-11-25"},
				providers: core.ProviderRegistry{mcpserver.SamplingProvider: mcpserver.Sampling()}})
			h := &host{replies: [][]mcp.Content{
				{&mcp.ToolUseContent{ID: "u1", Name: "tool_lookup", Input: map[string]any{"q": "rye"}}},
				{&mcp.TextContent{Text: "Rye is a grain."}},
			}}
			opts := &mcp.ClientOptions{CreateMessageWithToolsHandler: h.sample}
			var cs *mcp.ClientSession
			switch via {
			case "stdio":
				cs = stdioSessionOn(t, st.plugin, opts, "2025-11-25")
			case "sessionless 2025-11-25":
				cs = st.connect(t, "2025-11-25", opts, nil)
			default:
				cs = st.connect(t, via, opts, nil)
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"input": "what is rye?"}})
			if err != nil {
				t.Fatal(err)
			}
			if via == "sessionless 2025-11-25" {
				if !res.IsError || !strings.HasPrefix(text(res), mcpserver.CodeSamplingUnavailable) || len(h.requests()) != 0 {
					t.Fatalf("result %+v", res)
				}
				return
			}
			if res.IsError || text(res) != "Rye is a grain." {
				t.Fatalf("result %+v", res)
			}
			reqs := h.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d sampling requests", len(reqs))
			}
			first := reqs[0]
			if !strings.Contains(first.SystemPrompt, "You are terse.") || len(first.Tools) != 1 || first.Tools[0].Name != "tool_lookup" ||
				first.ModelPreferences == nil || first.ModelPreferences.Hints[0].Name != "claude" || first.MaxTokens <= 0 {
				t.Errorf("first request %+v", first)
			}
			if m := first.Messages; len(m) != 1 || m[0].Role != "user" || m[0].Content[0].(*mcp.TextContent).Text != "what is rye?" {
				t.Errorf("first messages %s", schemaOf(t, m))
			}
			second := reqs[1].Messages
			last := second[len(second)-1]
			tr, ok := last.Content[len(last.Content)-1].(*mcp.ToolResultContent)
			if len(second) != 3 || second[1].Role != "assistant" || !ok || tr.ToolUseID != "u1" || !strings.Contains(tr.Content[0].(*mcp.TextContent).Text, "found") {
				t.Errorf("second messages %s", schemaOf(t, second))
			}
		})
	}
}

// A 2026-07-28 retry answers the run it names once: the run waits in this
// process between the input_required result and the retry, and a replayed
// or forged requestState, or a retry without the host's message, is
// refused.
func TestSamplingRoundTripState(t *testing.T) {
	a := echo()
	a.Model = core.ModelRef{Provider: mcpserver.SamplingProvider, Model: "host"}
	st := newStack(t, setup{agents: []*core.Agent{a}, opts: mcpserver.Options{Agents: []string{"echo"}},
		providers: core.ProviderRegistry{mcpserver.SamplingProvider: mcpserver.Sampling()}})
	cs := st.connect(t, "2026-07-28", &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		CreateMessageWithToolsHandler: (&host{replies: [][]mcp.Content{{&mcp.TextContent{Text: "x"}}}}).sample}, nil)
	ctx := t.Context()
	call := func(state string, responses mcp.InputResponseMap) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"input": "hi"}, RequestState: state, InputResponses: responses})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := call("", nil)
	ask, ok := first.InputRequests["sampling"].(*mcp.CreateMessageWithToolsParams)
	if !first.NeedsInput() || !ok || first.RequestState == "" || ask.Messages[0].Content[0].(*mcp.TextContent).Text != "hi" {
		t.Fatalf("first answer %s", schemaOf(t, first))
	}
	if res := call(first.RequestState, mcp.InputResponseMap{"other": &mcp.ElicitResult{Action: "accept"}}); !res.IsError || !strings.HasPrefix(text(res), "VALIDATION_ERROR") {
		t.Errorf("a retry without the host's message %s", schemaOf(t, res))
	}
	reply := mcp.InputResponseMap{"sampling": &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "Rye."}}}}
	if res := call(first.RequestState, reply); res.IsError || text(res) != "Rye." {
		t.Fatalf("the retry %s", schemaOf(t, res))
	}
	if res := call(first.RequestState, reply); !res.IsError || !strings.HasPrefix(text(res), "NOT_FOUND") {
		t.Errorf("a replayed retry %s", schemaOf(t, res))
	}
}
