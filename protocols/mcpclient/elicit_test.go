package mcpclient_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/core/protocol"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/protocols/mcpclient"
	"github.com/breadai/bread/server"
)

var seatsSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"seats": map[string]any{"type": "integer", "minimum": 1}},
	"required":   []any{"seats"},
}

// bookingServer has a tool that asks how many seats before it books. It is
// written the 2026-07-28 way (an input-required result, answered on the
// retry); the SDK's server asks an older client with elicitation/create
// instead, during the call.
func bookingServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "booking", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "book", Description: "Book a table."}, func(_ context.Context, req *mcp.CallToolRequest, a struct {
		At string `json:"at"`
	}) (*mcp.CallToolResult, any, error) {
		resp, ok := req.Params.InputResponses["seats"]
		if !ok {
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{"seats": &mcp.ElicitParams{Message: "How many seats?", RequestedSchema: seatsSchema}},
				RequestState:  "booking",
			}, nil, nil
		}
		er, _ := resp.(*mcp.ElicitResult)
		if er == nil || er.Action != "accept" {
			action := "no answer"
			if er != nil {
				action = er.Action
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "not booked: " + action}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("booked %v seats at %s", er.Content["seats"], a.At)}}}, nil, nil
	})
	return s
}

// breadHTTP is a bread server over a real socket, its engine running the
// plugin and the agents on the scripted model.
func breadHTTP(t *testing.T, p core.BreadPlugin, model registry, agents ...*core.Agent) string {
	t.Helper()
	for _, a := range agents {
		if a.Model.Provider == "" {
			a.Model = core.ModelRef{Provider: "scripted", Model: "m"}
		}
	}
	in, err := engine.New(engine.Config{Store: memory.New(), Providers: model.Registry("scripted"), Agents: agents, Plugins: []core.BreadPlugin{p}})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Stop(context.Background()) })
	srv, err := server.New(in, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return hs.URL
}

// postStream posts body to url and reads the NDJSON stream to its end.
func postStream(t *testing.T, url, body string) []core.Crumb {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/x-ndjson")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", url, res.Status)
	}
	var out []core.Crumb
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f, err := protocol.DecodeCrumbFrame([]byte(line))
		if err != nil {
			t.Fatalf("a frame that does not decode: %v: %s", err, line)
		}
		out = append(out, f.Crumb)
	}
	return out
}

func crumbTypes(cs []core.Crumb) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.CrumbType()
	}
	return out
}

// TestElicitationOverHTTPResume is the acceptance: a bread agent calls an
// MCP server's tool that asks a question; the run ends its stream with a
// human:required carrying the server's schema and message; the answer
// posted to bread's resume route goes back to the server, whose tool
// completes, and the run ends with its result. Both protocol revisions: on
// 2026-07-28 the question is part of the call's round trips; on 2025-11-25
// it is a request of the server's own during the call.
func TestElicitationOverHTTPResume(t *testing.T) {
	for _, tt := range []struct {
		name     string
		protocol string // "": the newest, on a stateless server (2026-07-28 needs no session)
		answer   string
		result   string
	}{
		{"accept 2026-07-28", "", `{"seats": 4}`, "booked 4 seats at 8pm"},
		{"accept 2025-11-25", "2025-11-25", `{"seats": 4}`, "booked 4 seats at 8pm"},
		{"accept envelope", "", `{"action": "accept", "content": {"seats": 2}}`, "booked 2 seats at 8pm"},
		{"decline", "", `{"action": "decline"}`, "not booked: decline"},
		{"cancel 2025-11-25", "2025-11-25", `{"action": "cancel"}`, "not booked: cancel"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := &mcp.StreamableHTTPOptions{Stateless: tt.protocol == ""}
			mcpSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return bookingServer() }, opts))
			t.Cleanup(mcpSrv.Close)
			p, err := mcpclient.New(mcpclient.Options{Servers: []mcpclient.Server{{Name: "tables", URL: mcpSrv.URL, ProtocolVersion: tt.protocol, Elicitation: true}}})
			if err != nil {
				t.Fatal(err)
			}
			model := modeltest.New(
				modeltest.ToolCall("plugin_mcp_client_tables__book", map[string]string{"at": "8pm"}),
				modeltest.Text("done"),
			)
			url := breadHTTP(t, p, model, agentWith("host", mcpclient.AgentConfig{Servers: []string{"tables"}}))

			first := postStream(t, url+"/agents/host/run", `{"input": "book a table"}`)
			if len(first) == 0 {
				t.Fatal("no crumbs")
			}
			hr, ok := first[len(first)-1].(*core.HumanRequired)
			if !ok {
				t.Fatalf("the stream must end at human:required: %v", crumbTypes(first))
			}
			if hr.Kind != core.HumanInput || hr.Prompt != "How many seats?" || hr.ToolName != "plugin_mcp_client_tables__book" {
				t.Errorf("human:required %+v", hr)
			}
			if got, want := mustJSON(t, hr.Schema), mustJSON(t, seatsSchema); got != want {
				t.Errorf("the server's schema: %s, want %s", got, want)
			}

			cont := postStream(t, url+"/resume/"+hr.CheckpointID, `{"response": `+tt.answer+`}`)
			results := find[*core.ToolResult](cont)
			if len(results) != 1 || mustJSON(t, results[0].Result) != mustJSON(t, tt.result) {
				t.Fatalf("the server's tool result: %s (%v)", mustJSON(t, results), crumbTypes(cont))
			}
			end := find[*core.AgentRunEnd](cont)
			if len(end) != 1 || mustJSON(t, end[0].Output) != `"done"` {
				t.Fatalf("the run ends: %v", crumbTypes(cont))
			}
			reqs := model.Requests()
			msgs := reqs[len(reqs)-1].Messages
			if got := string(msgs[len(msgs)-1].Parts[0].Output); got != mustJSON(t, tt.result) {
				t.Errorf("the model reads the server's result: %s", got)
			}
		})
	}
}

// TestElicitationDisabledByDefault: a server the declaration does not
// allow to ask gets the SDK's refusal, and the run is not suspended.
func TestElicitationDisabledByDefault(t *testing.T) {
	mcpSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return bookingServer() }, nil))
	t.Cleanup(mcpSrv.Close)
	p, err := mcpclient.New(mcpclient.Options{Servers: []mcpclient.Server{{Name: "tables", URL: mcpSrv.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	model := modeltest.New(modeltest.ToolCall("plugin_mcp_client_tables__book", map[string]string{"at": "8pm"}), modeltest.Text("done"))
	in := start(t, p, model, agentWith("host", mcpclient.AgentConfig{Servers: []string{"tables"}}))
	cs, err := run(t, in, "host", "book")
	if err != nil {
		t.Fatal(err)
	}
	if len(find[*core.HumanRequired](cs)) != 0 || len(find[*core.ToolError](cs)) != 1 {
		t.Fatalf("no question without the capability, the call fails: %v", crumbTypes(cs))
	}
}
