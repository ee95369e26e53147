package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/protocols/mcpclient"
)

func TestSanitizeToolName(t *testing.T) {
	for in, want := range map[string]string{
		"list-files": "list_files", "readFile": "read_file", "fs.read": "fs_read", "getHTTPStatus": "get_httpstatus",
		"__x__": "x", "9lives": "t_9lives", "ok_name": "ok_name", "": "t", "a--b": "a_b",
	} {
		if got := mcpclient.SanitizeToolName(in); got != want {
			t.Errorf("SanitizeToolName(%q) = %q, want %q", in, got, want)
		}
		if got := mcpclient.SanitizeToolName(in); !core.ValidName(got) && len(got) <= 64 {
			t.Errorf("SanitizeToolName(%q) = %q is not a valid name", in, got)
		}
	}
}

// An agent that names a server over Streamable HTTP gets its tools under
// <server>__<tool> with the server's schemas, and each kind of result
// becomes the tool:result or tool:error crumb it should.
func TestHTTPToolsSchemasAndResults(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol "+cmpOr(version, "newest"), func(t *testing.T) {
			srv := serveHTTP(t, testServer(), nil)
			p, err := mcpclient.New(mcpclient.Options{Servers: []mcpclient.Server{{Name: "srv", URL: srv.URL, ProtocolVersion: version}}})
			if err != nil {
				t.Fatal(err)
			}
			model := modeltest.New(
				modeltest.ToolCalls(
					modeltest.Call{ID: "1", Name: "plugin_mcp_client_srv__echo", Args: map[string]any{"text": "hi"}},
					modeltest.Call{ID: "2", Name: "plugin_mcp_client_srv__get_weather", Args: map[string]any{"city": "Turin"}},
					modeltest.Call{ID: "3", Name: "plugin_mcp_client_srv__chart", Args: map[string]any{}},
					modeltest.Call{ID: "4", Name: "plugin_mcp_client_srv__fail", Args: map[string]any{}},
				),
				modeltest.Text("done"),
			)
			in := start(t, p, model, agentWith("a", mcpclient.AgentConfig{Servers: []string{"srv"}}))
			crumbs, err := run(t, in, "a", "go")
			if err != nil {
				t.Fatal(err)
			}

			// Schema translation: the model sees the server's input schema.
			specs := model.Requests()[0].Tools
			names := make([]string, len(specs))
			for i, s := range specs {
				names[i] = s.Name
			}
			want := []string{"plugin_mcp_client_srv__chart", "plugin_mcp_client_srv__echo", "plugin_mcp_client_srv__fail", "plugin_mcp_client_srv__get_weather"}
			if !slices.Equal(names, want) {
				t.Fatalf("tools %v, want %v", names, want)
			}
			var echoSchema struct {
				Type       string                     `json:"type"`
				Required   []string                   `json:"required"`
				Properties map[string]json.RawMessage `json:"properties"`
			}
			if err := json.Unmarshal(specs[1].InputSchema, &echoSchema); err != nil || echoSchema.Type != "object" || !slices.Equal(echoSchema.Required, []string{"text"}) || !strings.Contains(string(echoSchema.Properties["text"]), "what to echo") {
				t.Errorf("echo schema %s", specs[1].InputSchema)
			}
			if !strings.Contains(specs[3].Description, `"getWeather"`) {
				t.Errorf("a renamed tool's description names the original: %q", specs[3].Description)
			}

			results := map[string]any{}
			for _, r := range find[*core.ToolResult](crumbs) {
				results[r.ToolCallID] = r.Result
			}
			if results["1"] != "hi" {
				t.Errorf("echo result %#v", results["1"])
			}
			if got := mustJSON(t, results["2"]); got != `{"city":"Turin","tempC":21.5}` {
				t.Errorf("structured result %s", got)
			}
			chart := mustJSON(t, results["3"])
			for _, part := range []string{`{"type":"text","text":"the chart"}`, `"type":"image"`, `"mimeType":"image/png"`, `"data":"iVBORw0KGgo="`, `"type":"resource_link"`, `"uri":"file:///charts/q3.pdf"`} {
				if !strings.Contains(chart, part) {
					t.Errorf("chart result %s lacks %s", chart, part)
				}
			}
			errs := find[*core.ToolError](crumbs)
			if len(errs) != 1 || errs[0].ToolCallID != "4" || errs[0].Error.Code != core.CodeToolError || errs[0].Error.Message != "the disk is full" || errs[0].Error.Context["server"] != "srv" {
				t.Errorf("tool errors %+v", errs)
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a == "" {
		return b
	}
	return a
}

// permissions apply to MCP tools like any plugin tool: ask suspends the run,
// approval runs the call, deny hides the tool.
func TestPermissionsAsk(t *testing.T) {
	srv := serveHTTP(t, testServer(), nil)
	p, err := mcpclient.New(mcpclient.Options{Servers: []mcpclient.Server{{Name: "srv", URL: srv.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	model := modeltest.New(modeltest.ToolCall("plugin_mcp_client_srv__echo", map[string]any{"text": "approved"}), modeltest.Text("ok"))
	a := agentWith("a", mcpclient.AgentConfig{Servers: []string{"srv"}})
	a.Permissions = core.Permissions{Ask: []string{"plugin:mcp_client/srv__echo"}, Deny: []string{"plugin:mcp_client/srv__fail"}}
	in := start(t, p, model, a)
	crumbs, err := run(t, in, "a", "go")
	if err != nil {
		t.Fatal(err)
	}
	hr := find[*core.HumanRequired](crumbs)
	if len(hr) != 1 || hr[0].Kind != core.HumanApproval || hr[0].ToolName != "plugin_mcp_client_srv__echo" {
		t.Fatalf("human:required %+v", hr)
	}
	if len(find[*core.ToolResult](crumbs)) != 0 {
		t.Fatal("the gated tool ran before approval")
	}
	for _, s := range model.Requests()[0].Tools {
		if strings.HasSuffix(s.Name, "__fail") {
			t.Error("a denied tool was offered")
		}
	}
	var resumed []core.Crumb
	for c, err := range in.Resume(t.Context(), hr[0].CheckpointID, map[string]any{"approved": true}) {
		if err != nil {
			t.Fatal(err)
		}
		resumed = append(resumed, c)
	}
	res := find[*core.ToolResult](resumed)
	if len(res) != 1 || res[0].Result != "approved" {
		t.Fatalf("after approval %+v", res)
	}
}

// Two server tools that sanitise to one name are refused with
// TOOL_NAME_COLLISION.
func TestCollisionRefused(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "x", Version: "1"}, nil)
	for _, name := range []string{"list-files", "listFiles"} {
		mcp.AddTool(s, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	}
	srv := serveHTTP(t, s, nil)
	p, err := mcpclient.New(mcpclient.Options{Servers: []mcpclient.Server{{Name: "fs", URL: srv.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	in := start(t, p, modeltest.New(modeltest.Text("x")), agentWith("a", mcpclient.AgentConfig{Servers: []string{"fs"}}))
	_, err = run(t, in, "a", "go")
	if be := core.AsBreadError(err, ""); be == nil || be.Code != core.CodeToolNameCollision || !strings.Contains(be.Message, "fs__list_files") {
		t.Fatalf("err = %v, want TOOL_NAME_COLLISION naming the tool", err)
	}
	// Denying the name lets the agent run without them.
	b := agentWith("b", mcpclient.AgentConfig{Servers: []string{"fs"}})
	b.Permissions = core.Permissions{Deny: []string{"plugin:mcp_client/fs__list_files"}}
	in2 := start(t, mustNew(t, mcpclient.Options{Servers: []mcpclient.Server{{Name: "fs", URL: srv.URL}}}), modeltest.New(modeltest.Text("x")), b)
	if _, err := run(t, in2, "b", "go"); err != nil {
		t.Fatalf("with the name denied: %v", err)
	}
}

// A server that cannot start is reported and retried; it does not take the
// other servers down.
func TestFailingServerDoesNotTakeOthersDown(t *testing.T) {
	srv := serveHTTP(t, testServer(), nil)
	p, err := mcpclient.New(mcpclient.Options{Servers: []mcpclient.Server{
		{Name: "broken", Command: filepath.Join(t.TempDir(), "no-such-binary")},
		{Name: "srv", URL: srv.URL},
	}})
	if err != nil {
		t.Fatal(err)
	}
	model := modeltest.New(modeltest.ToolCall("plugin_mcp_client_srv__echo", map[string]any{"text": "still here"}), modeltest.Text("ok"))
	in := start(t, p, model, agentWith("a", mcpclient.AgentConfig{Servers: []string{"broken", "srv"}}))
	crumbs, err := run(t, in, "a", "go")
	if err != nil {
		t.Fatal(err)
	}
	if res := find[*core.ToolResult](crumbs); len(res) != 1 || res[0].Result != "still here" {
		t.Fatalf("results %+v", res)
	}
}

func TestUndeclaredServerFailsInit(t *testing.T) {
	p, err := mcpclient.New(mcpclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	model := modeltest.New()
	a := agentWith("a", mcpclient.AgentConfig{Servers: []string{"nope"}})
	a.Model = core.ModelRef{Provider: "scripted", Model: "m"}
	in, err := newEngine(p, model, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(t.Context()); !errors.Is(err, &core.BreadError{Code: core.CodeInvalidConfig}) || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("Start = %v, want INVALID_CONFIG naming the server", err)
	}
}

func TestBadDeclarations(t *testing.T) {
	for name, s := range map[string]mcpclient.Server{
		"bad name":       {Name: "Bad-Name", URL: "http://x"},
		"stdio no cmd":   {Name: "a", Transport: "stdio"},
		"http bad url":   {Name: "a", URL: "ftp://x"},
		"stdio headers":  {Name: "a", Command: "x", Headers: map[string]string{"a": "b"}},
		"unknown":        {Name: "a", Transport: "sse", URL: "http://x"},
		"auth no secret": {Name: "a", URL: "http://x", Auth: &mcpclient.CredentialAuth{}},
	} {
		if _, err := mcpclient.New(mcpclient.Options{Servers: []mcpclient.Server{s}}); err == nil {
			t.Errorf("%s: New accepted %+v", name, s)
		}
	}
}

// Header credentials come from the credential provider, on every request.
func TestCredentialHeaders(t *testing.T) {
	var bad atomic.Int32
	srv := serveHTTP(t, testServer(), func(r *http.Request) bool {
		ok := r.Header.Get("X-Api-Key") == "k-123" && r.Header.Get("Authorization") == "Bearer tok" && r.Header.Get("X-Team") == "docs"
		if !ok {
			bad.Add(1)
		}
		return ok
	})
	creds := core.CredentialFunc(func(_ context.Context, name string) (string, error) {
		switch name {
		case "SEARCH_KEY":
			return "k-123", nil
		case "SEARCH_TOKEN":
			return "tok", nil
		}
		return "", &core.BreadError{Code: core.CodeCredentialUnavailable, Message: name}
	})
	p, err := mcpclient.New(mcpclient.Options{Credentials: creds, Servers: []mcpclient.Server{{
		Name: "srv", URL: srv.URL, Headers: map[string]string{"X-Team": "docs"},
		CredentialHeaders: map[string]string{"X-Api-Key": "SEARCH_KEY"}, Auth: &mcpclient.CredentialAuth{Credential: "SEARCH_TOKEN"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	model := modeltest.New(modeltest.ToolCall("plugin_mcp_client_srv__echo", map[string]any{"text": "signed"}), modeltest.Text("ok"))
	in := start(t, p, model, agentWith("a", mcpclient.AgentConfig{Servers: []string{"srv"}}))
	crumbs, err := run(t, in, "a", "go")
	if err != nil {
		t.Fatal(err)
	}
	if res := find[*core.ToolResult](crumbs); len(res) != 1 || res[0].Result != "signed" || bad.Load() != 0 {
		t.Fatalf("results %+v, %d unsigned requests", res, bad.Load())
	}
}

// An inline server connects on first use, once per name and URL, and closes
// once.
func TestExternalServerLazyAndShared(t *testing.T) {
	var requests atomic.Int32
	srv := serveHTTP(t, testServer(), func(r *http.Request) bool {
		requests.Add(1)
		return r.Header.Get("X-Key") == "static"
	})
	p, err := mcpclient.New(mcpclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ext := mcpclient.AgentConfig{External: []mcpclient.ExternalServer{{Name: "ext", URL: srv.URL, Headers: map[string]string{"X-Key": "static"}}}}
	// The second agent gives its configuration as a file would: a map.
	b := &core.Agent{ID: "b", Plugins: map[string]any{"mcp_client": map[string]any{"external": []any{map[string]any{"name": "ext", "url": srv.URL, "headers": map[string]any{"X-Key": "static"}}}}}}
	model := modeltest.New(modeltest.ToolCall("plugin_mcp_client_ext__echo", map[string]any{"text": "lazy"}), modeltest.Text("ok"))
	in := start(t, p, model, agentWith("a", ext), b)
	if n := requests.Load(); n != 0 {
		t.Fatalf("%d requests before the first run", n)
	}
	crumbs, err := run(t, in, "a", "go")
	if err != nil {
		t.Fatal(err)
	}
	if res := find[*core.ToolResult](crumbs); len(res) != 1 || res[0].Result != "lazy" {
		t.Fatalf("results %+v", res)
	}
	tools1, err := p.ResolveAgentTools(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	tools2, err := p.ResolveAgentTools(t.Context(), b)
	if err != nil || len(tools1) != 4 || len(tools2) != 4 {
		t.Fatalf("tools %v %v (%v)", toolNames(tools1), toolNames(tools2), err)
	}
	// One connection: the calls go to the session the first agent opened.
	if n := requests.Load(); n > 12 {
		t.Errorf("%d requests: the inline server was connected more than once", n)
	}
	if err := p.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// notifications/tools/list_changed refreshes the tool set (Streamable HTTP,
// where the newest revision subscribes with subscriptions/listen).
func TestListChangedHTTP(t *testing.T) {
	s := testServer()
	srv := serveHTTP(t, s, nil)
	p, err := mcpclient.New(mcpclient.Options{Servers: []mcpclient.Server{{Name: "srv", URL: srv.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	a := agentWith("a", mcpclient.AgentConfig{Servers: []string{"srv"}})
	start(t, p, modeltest.New(modeltest.Text("x")), a)
	mcp.AddTool(s, &mcp.Tool{Name: "newTool", Description: "Late."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	eventually(t, "the new tool", func() bool {
		tools, _ := p.ResolveAgentTools(t.Context(), a)
		return slices.Contains(toolNames(tools), "srv__new_tool")
	})
	s.RemoveTools("echo")
	eventually(t, "the removed tool to go", func() bool {
		tools, _ := p.ResolveAgentTools(t.Context(), a)
		return !slices.Contains(toolNames(tools), "srv__echo")
	})
}

// Over stdio: the server's environment is minimal plus what is declared, a
// killed server is restarted with backoff, and list_changed refreshes.
func TestStdioReconnectAndListChanged(t *testing.T) {
	bin := fixtureBinary(t)
	pidfile := filepath.Join(t.TempDir(), "pids")
	t.Setenv("BREAD_TEST_LEAK", "must-not-leak")
	creds := core.CredentialFunc(func(_ context.Context, name string) (string, error) { return "s3cret-" + name, nil })
	p, err := mcpclient.New(mcpclient.Options{Credentials: creds, Servers: []mcpclient.Server{{
		Name: "local", Command: bin, Env: map[string]string{"PIDFILE": pidfile, "GREETING": "hello"}, CredentialEnv: map[string]string{"SECRET": "KEY"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	model := callEveryRun("plugin_mcp_client_local__who_am_i", map[string]any{})
	a := agentWith("a", mcpclient.AgentConfig{Servers: []string{"local"}})
	in := start(t, p, model, a)

	whoami := func() string {
		t.Helper()
		crumbs, err := run(t, in, "a", "go")
		if err != nil {
			t.Fatal(err)
		}
		if errs := find[*core.ToolError](crumbs); len(errs) > 0 {
			t.Fatalf("tool error %+v", errs[0].Error)
		}
		res := find[*core.ToolResult](crumbs)
		if len(res) != 1 {
			t.Fatalf("results %+v", crumbs)
		}
		return res[0].Result.(string)
	}
	pids := func() []string {
		b, _ := os.ReadFile(pidfile)
		return strings.Fields(string(b))
	}
	first := whoami()
	if len(pids()) != 1 || !strings.HasPrefix(first, pids()[0]+" hello s3cret-KEY") {
		t.Fatalf("whoami %q, pids %v", first, pids())
	}
	pid, _ := strconv.Atoi(pids()[0])
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the server to be restarted", func() bool { return len(pids()) == 2 })
	eventually(t, "calls to reach the new process", func() bool {
		crumbs, _ := run(t, in, "a", "go")
		res := find[*core.ToolResult](crumbs)
		return len(res) == 1 && strings.HasPrefix(res[0].Result.(string), pids()[1]+" ")
	})

	// list_changed: the add_tool tool registers "extra".
	model2 := callEveryRun("plugin_mcp_client_local__add_tool", map[string]any{})
	in2 := start(t, mustNew(t, mcpclient.Options{Servers: []mcpclient.Server{{Name: "local", Command: bin}}}), model2, agentWith("b", mcpclient.AgentConfig{Servers: []string{"local"}}))
	if _, err := run(t, in2, "b", "go"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "extra after list_changed", func() bool {
		_, _ = run(t, in2, "b", "go")
		reqs := model2.Requests()
		for _, s := range reqs[len(reqs)-1].Tools {
			if s.Name == "plugin_mcp_client_local__extra" {
				return true
			}
		}
		return false
	})
}

func mustNew(t *testing.T, o mcpclient.Options) *mcpclient.Plugin {
	t.Helper()
	p, err := mcpclient.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A Streamable HTTP server that goes away and comes back on the same
// address is reconnected.
func TestHTTPReconnect(t *testing.T) {
	s := testServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil) // stateful: a restart loses the session
	srv1 := &http.Server{Handler: h}
	ln := listen(t, "127.0.0.1:0")
	addr := ln.Addr().String()
	go srv1.Serve(ln)
	p := mustNew(t, mcpclient.Options{Servers: []mcpclient.Server{{Name: "srv", URL: "http://" + addr, ProtocolVersion: "2025-11-25"}}})
	model := callEveryRun("plugin_mcp_client_srv__echo", map[string]any{"text": "x"})
	in := start(t, p, model, agentWith("a", mcpclient.AgentConfig{Servers: []string{"srv"}}))
	echoOK := func() bool {
		crumbs, _ := run(t, in, "a", "go")
		res := find[*core.ToolResult](crumbs)
		return len(res) == 1 && res[0].Result == "x"
	}
	if !echoOK() {
		t.Fatal("first call failed")
	}
	_ = srv1.Close()
	crumbs, _ := run(t, in, "a", "go")
	if errs := find[*core.ToolError](crumbs); len(errs) != 1 || errs[0].Error.Code != core.CodeToolError {
		t.Fatalf("a call while the server is down: %+v", crumbs)
	}
	srv2 := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)}
	ln2 := listen(t, addr)
	go srv2.Serve(ln2)
	t.Cleanup(func() { srv2.Close() })
	eventually(t, "calls after the server came back", echoOK)
}
