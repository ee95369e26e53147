package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/protocols/mcpserver"
	"github.com/breadai/bread/server"
)

var (
	topicSchema = json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string","minLength":3}},"required":["topic"]}`)
	titleSchema = json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`)
)

func writer() *core.Agent {
	return &core.Agent{ID: "writer", Description: "Writes titles.", InputSchema: topicSchema, OutputSchema: titleSchema, Output: core.OutputFormat{Format: core.FormatJSON},
		Skills: []core.Skill{{ID: "deep", Name: "Deep", Description: "Thinks harder.", Instructions: "Think."}}}
}

func echo() *core.Agent { return &core.Agent{ID: "echo"} }

// Agents carry their real schemas (non-object ones wrapped), answer with
// structured content, and both protocol revisions the SDK speaks are served
// on the one endpoint.
func TestAgentToolsOnBothRevisions(t *testing.T) {
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			model := modeltest.New(modeltest.Text("Bread ", "is good."))
			st := newStack(t, setup{model: model, agents: []*core.Agent{writer(), echo()},
				opts: mcpserver.Options{Agents: []string{"writer", "echo"}, Skills: []mcpserver.SkillRef{{Agent: "writer", Skill: "deep"}}}})
			cs := st.connect(t, version, nil, nil)
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s, want %s", got, version)
			}
			lt, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]*mcp.Tool{}
			for _, tl := range lt.Tools {
				byName[tl.Name] = tl
			}
			if len(byName) != 3 || byName["writer__deep"] == nil {
				t.Fatalf("tools %v", byName)
			}
			w := byName["writer"]
			if !jsonEq(t, schemaOf(t, w.InputSchema), string(topicSchema)) || !jsonEq(t, schemaOf(t, w.OutputSchema), string(titleSchema)) || !strings.Contains(w.Description, "Writes titles.") {
				t.Errorf("writer: %s / %s / %q", schemaOf(t, w.InputSchema), schemaOf(t, w.OutputSchema), w.Description)
			}
			e := byName["echo"]
			if in := schemaOf(t, e.InputSchema); in != `{"additionalProperties":false,"properties":{"input":{"type":"string"}},"required":["input"],"type":"object"}` {
				t.Errorf("echo input %s", in)
			}
			if out := schemaOf(t, e.OutputSchema); out != `{"additionalProperties":false,"properties":{"output":{"type":"string"}},"required":["output"],"type":"object"}` {
				t.Errorf("echo output %s", out)
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"input": "hi"}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || structured(t, res) != `{"output":"Bread is good."}` || text(res) != "Bread is good." {
				t.Errorf("echo result %+v %s", res, structured(t, res))
			}
			// Invalid input is the engine's VALIDATION_ERROR, as a tool error.
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "writer", Arguments: map[string]any{"topic": "x"}})
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !strings.HasPrefix(text(res), "VALIDATION_ERROR") {
				t.Errorf("invalid input: %+v", res)
			}
		})
	}
}

func TestStructuredObjectOutputAndSkill(t *testing.T) {
	model := modeltest.New(modeltest.JSON(map[string]any{"title": "Crust"}))
	st := newStack(t, setup{model: model, agents: []*core.Agent{writer()}, opts: mcpserver.Options{Skills: []mcpserver.SkillRef{{Agent: "writer", Skill: "deep"}}}})
	cs := st.connect(t, "", nil, nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "writer__deep", Arguments: map[string]any{"topic": "bread"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || structured(t, res) != `{"title":"Crust"}` {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(model.Requests()[0].System, "Think.") {
		t.Error("the skill was not active for the run")
	}
}

// A progress token turns the run's crumbs into progress notifications.
func TestProgressFromCrumbs(t *testing.T) {
	tool := core.Tool{Name: "lookup", Description: "Looks up.", Execute: func(context.Context, json.RawMessage, core.ToolContext) (any, error) { return "found", nil }}
	a := echo()
	a.Tools = []core.Tool{tool}
	model := modeltest.New(modeltest.ToolCall("tool_lookup", map[string]any{}), modeltest.Text("done"), modeltest.ToolCall("tool_lookup", map[string]any{}), modeltest.Text("done"))
	st := newStack(t, setup{model: model, agents: []*core.Agent{a}, opts: mcpserver.Options{Agents: []string{"echo"}}})
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		var mu sync.Mutex
		var got []*mcp.ProgressNotificationParams
		cs := st.connect(t, version, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, r.Params)
			mu.Unlock()
		}}, nil)
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"input": "go"}, Meta: mcp.Meta{"progressToken": "p1"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			t.Fatalf("%s: %+v", version, res)
		}
		messages := func() string {
			mu.Lock()
			defer mu.Unlock()
			var msgs []string
			for _, p := range got {
				msgs = append(msgs, p.Message)
			}
			return strings.Join(msgs, "|")
		}
		eventually(t, version+" progress up to agent:run:end", func() bool { return strings.Contains(messages(), "agent:run:end") })
		for _, want := range []string{"agent:run:start", "tool:call tool_lookup", "tool:result tool_lookup", "text:delta: done", "agent:run:end"} {
			if !strings.Contains(messages(), want) {
				t.Errorf("%s: progress %q lacks %q", version, messages(), want)
			}
		}
		mu.Lock()
		for i, p := range got {
			if p.ProgressToken != "p1" || (i > 0 && p.Progress <= got[i-1].Progress) {
				t.Errorf("%s: notification %d %+v", version, i, p)
			}
		}
		mu.Unlock()
	}
}

// A run that waits for a human answers with the checkpoint to resume.
func TestSuspendedRunNamesCheckpoint(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		a := echo()
		a.Tools = []core.Tool{{Name: "publish", Description: "Publishes.", Execute: func(context.Context, json.RawMessage, core.ToolContext) (any, error) { return "published", nil }}}
		a.Permissions = core.Permissions{Ask: []string{"tool:publish"}}
		model := modeltest.New(modeltest.ToolCall("tool_publish", map[string]any{}), modeltest.Text("done"))
		st := newStack(t, setup{store: open(t), model: model, agents: []*core.Agent{a}, opts: mcpserver.Options{Agents: []string{"echo"}}})
		cs := st.connect(t, "", nil, nil)
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"input": "go"}})
		if err != nil {
			t.Fatal(err)
		}
		cp, _ := res.Meta["bread/checkpointId"].(string)
		if !res.IsError || cp == "" || !strings.Contains(text(res), "waiting for a human's approval") || !strings.Contains(text(res), cp) {
			t.Fatalf("result %+v", res)
		}
		var out any
		for c, err := range st.in.Resume(t.Context(), cp, map[string]any{"approved": true}) {
			if err != nil {
				t.Fatal(err)
			}
			if e, ok := c.(*core.AgentRunEnd); ok {
				out = e.Output
			}
		}
		if out != "done" {
			t.Fatalf("resumed output %v", out)
		}
	})
}

// Cancelling the call cancels the run, over Streamable HTTP (both
// revisions) and stdio.
func TestCancellationCancelsTheRun(t *testing.T) {
	cases := []string{"2026-07-28", "2025-11-25", "stdio"}
	eachStore(t, func(t *testing.T, open func(testing.TB) core.BreadStore) {
		for _, c := range cases {
			t.Run(c, func(t *testing.T) {
				reached := make(chan struct{})
				model := modeltest.New(modeltest.Block(reached))
				st := newStack(t, setup{store: open(t), model: model, agents: []*core.Agent{echo()}, opts: mcpserver.Options{Agents: []string{"echo"}}})
				var cs *mcp.ClientSession
				if c == "stdio" {
					cs = stdioSession(t, st.plugin, nil)
				} else {
					cs = st.connect(t, c, nil, nil)
				}
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() {
					_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"input": "wait"}})
					done <- err
				}()
				<-reached
				cancel()
				if err := <-done; !errors.Is(err, context.Canceled) {
					t.Errorf("CallTool = %v", err)
				}
				var run string
				eventually(t, "the run to be cancelled", func() bool {
					for _, cr := range st.seen() {
						if e, ok := cr.(*core.AgentError); ok && e.Error.Code == core.CodeRunCancelled {
							run = e.RunID
							return true
						}
					}
					return false
				})
				// The store says so too, for any replica that reads the run.
				eventually(t, "the run's record to say cancelled", func() bool {
					rec, err := st.in.Storage().GetRun(t.Context(), run)
					return err == nil && rec.Status == core.RunCancelled && rec.ErrorCode == core.CodeRunCancelled
				})
			})
		}
	})
}

// notifications/cancelled on its own request (what a client that keeps the
// call's request open sends) cancels the run too.
func TestCancelledNotificationOnStatelessHTTP(t *testing.T) {
	reached := make(chan struct{})
	st := newStack(t, setup{model: modeltest.New(modeltest.Block(reached)), agents: []*core.Agent{echo()}, opts: mcpserver.Options{Agents: []string{"echo"}}})
	post := func(body string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, st.srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	call := make(chan *http.Response, 1)
	go func() {
		call <- post(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"input":"x"}}}`)
	}()
	<-reached
	resp := post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notification answered %d", resp.StatusCode)
	}
	eventually(t, "the run to be cancelled", func() bool {
		for _, cr := range st.seen() {
			if e, ok := cr.(*core.AgentError); ok && e.Error.Code == core.CodeRunCancelled {
				return true
			}
		}
		return false
	})
	(<-call).Body.Close()
}

// keyAuth authenticates "Bearer good" and "Bearer other".
type keyAuth struct{}

func (keyAuth) Name() string { return "key" }
func (keyAuth) Authenticate(r *http.Request) (*core.AuthIdentity, error) {
	switch r.Header.Get("Authorization") {
	case "Bearer good":
		return &core.AuthIdentity{Subject: "good"}, nil
	case "Bearer other":
		return &core.AuthIdentity{Subject: "other"}, nil
	}
	return nil, nil
}

// /mcp is gated by auth and Authorize under mcpserver.ActionRequest.
func TestAuthOnMCP(t *testing.T) {
	var mu sync.Mutex
	var actions []string
	authorize := func(_ context.Context, id *core.AuthIdentity, action string, _ map[string]string) bool {
		mu.Lock()
		actions = append(actions, action)
		mu.Unlock()
		return id != nil && id.Subject == "good" && action == mcpserver.ActionRequest
	}
	st := newStack(t, setup{model: modeltest.New(modeltest.Text("authorized")), agents: []*core.Agent{echo()}, auth: &server.Auth{Strategies: []core.BreadAuthStrategy{keyAuth{}}, Authorize: authorize},
		opts: mcpserver.Options{Agents: []string{"echo"}}})
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for key, want := range map[string]int{"": http.StatusUnauthorized, "Bearer bad": http.StatusUnauthorized, "Bearer other": http.StatusForbidden, "Bearer good": http.StatusOK} {
		req, _ := http.NewRequest(http.MethodPost, st.srv.URL+"/mcp", strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if key != "" {
			req.Header.Set("Authorization", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%q: %d, want %d", key, resp.StatusCode, want)
		}
	}
	cs := st.connect(t, "", nil, http.Header{"Authorization": {"Bearer good"}})
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"input": "x"}})
	if err != nil || text(res) != "authorized" {
		t.Fatalf("%v %+v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range actions {
		if a != mcpserver.ActionRequest {
			t.Errorf("authorize saw action %q", a)
		}
	}
}

// Host and Origin are validated: loopback by default, AllowedHosts when set.
func TestHostAndOriginRefused(t *testing.T) {
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	do := func(st *stack, host, origin, key string) int {
		req, _ := http.NewRequest(http.MethodPost, st.srv.URL+"/mcp", strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			// As a browser sends it for the page's own origin: a page of
			// another origin is refused ahead of the plugin by the
			// server's cross-origin guard (server.TestCrossSiteRequestsAreRefused);
			// these cases test the plugin's own check behind it.
			req.Header.Set("Origin", origin)
			req.Header.Set("Sec-Fetch-Site", "same-origin")
		}
		if key != "" {
			req.Header.Set("Authorization", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusForbidden {
			// Every 403 is the server's, byte for byte.
			body, _ := io.ReadAll(resp.Body)
			if string(body) != server.ForbiddenBody || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("host %q origin %q: 403 %q (%s), want the server's %q", host, origin, body, resp.Header.Get("Content-Type"), server.ForbiddenBody)
			}
		}
		return resp.StatusCode
	}
	allow := func(context.Context, *core.AuthIdentity, string, map[string]string) bool { return true }
	// With auth on, the server's loopback guard is off: the plugin's check
	// is what refuses a rebinding attack.
	st := newStack(t, setup{agents: []*core.Agent{echo()}, auth: &server.Auth{Strategies: []core.BreadAuthStrategy{keyAuth{}}, Authorize: allow}, opts: mcpserver.Options{Agents: []string{"echo"}}})
	for _, c := range []struct {
		host, origin string
		want         int
	}{
		{"", "", 200}, {"localhost:1234", "", 200}, {"[::1]:80", "http://localhost:3000", 200},
		{"evil.example.com", "", 403}, {"localhost", "http://evil.example.com", 403}, {"localhost", "null", 403},
	} {
		if got := do(st, c.host, c.origin, "Bearer good"); got != c.want {
			t.Errorf("host %q origin %q: %d, want %d", c.host, c.origin, got, c.want)
		}
	}
	named := newStack(t, setup{agents: []*core.Agent{echo()}, auth: &server.Auth{Strategies: []core.BreadAuthStrategy{keyAuth{}}, Authorize: allow}, opts: mcpserver.Options{Agents: []string{"echo"}, AllowedHosts: []string{"mcp.example.com"}}})
	if got := do(named, "mcp.example.com:443", "https://MCP.example.com", "Bearer good"); got != 200 {
		t.Errorf("an allowed host: %d", got)
	}
	if got := do(named, "localhost", "", "Bearer good"); got != 403 {
		t.Errorf("AllowedHosts replaces the loopback default: %d", got)
	}
	// Without auth, the server's own loopback guard refuses first.
	open := newStack(t, setup{agents: []*core.Agent{echo()}, opts: mcpserver.Options{Agents: []string{"echo"}}})
	if got := do(open, "evil.example.com", "", ""); got != 403 {
		t.Errorf("no auth, evil host: %d", got)
	}
	if got := do(open, "localhost", "http://evil.example.com", ""); got != 403 {
		t.Errorf("no auth, evil origin: %d", got)
	}
}

// Tasks run standalone; tools run directly with scoped credentials and
// MCP content passes through.
func TestTasksAndDirectTools(t *testing.T) {
	task := &core.Task{Name: "summarize", Description: "Summarizes.", Instructions: "Summarize.", InputSchema: json.RawMessage(`{"type":"string"}`), OutputSchema: titleSchema}
	secret := core.Tool{Name: "secret", Description: "Reads a credential.", Credentials: []string{"ALLOWED"},
		InputSchema:        json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		CredentialProvider: core.CredentialFunc(func(_ context.Context, n string) (string, error) { return "value-of-" + n, nil }),
		Execute: func(ctx context.Context, raw json.RawMessage, tc core.ToolContext) (any, error) {
			var a struct{ Name string }
			_ = json.Unmarshal(raw, &a)
			return tc.Credentials.Get(ctx, a.Name)
		}}
	image := core.Tool{Name: "image", Description: "An image.", Execute: func(context.Context, json.RawMessage, core.ToolContext) (any, error) {
		return []mcp.Content{&mcp.ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}}, nil
	}}
	a := echo()
	a.Tools = []core.Tool{secret}
	st := newStack(t, setup{model: modeltest.New(modeltest.JSON(map[string]any{"title": "Short"})), agents: []*core.Agent{a}, tasks: []*core.Task{task},
		more: []core.BreadPlugin{toolsPlugin{image}},
		opts: mcpserver.Options{Tasks: []string{"summarize"}, Tools: []mcpserver.ToolRef{{Agent: "echo", Tool: "secret"}, {Tool: "image"}}}})
	cs := st.connect(t, "", nil, nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "summarize", Arguments: map[string]any{"input": "a long text"}})
	if err != nil || res.IsError || structured(t, res) != `{"title":"Short"}` {
		t.Fatalf("task: %v %+v", err, res)
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo__secret", Arguments: map[string]any{"name": "ALLOWED"}})
	if err != nil || res.IsError || text(res) != "value-of-ALLOWED" {
		t.Fatalf("allowed credential: %v %+v", err, res)
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo__secret", Arguments: map[string]any{"name": "OTHER"}})
	if err != nil || !res.IsError || !strings.HasPrefix(text(res), core.CodeCredentialNotDeclared) {
		t.Fatalf("undeclared credential: %v %+v", err, res)
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo__secret", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.HasPrefix(text(res), core.CodeValidationError) {
		t.Fatalf("invalid arguments: %v %+v", err, res)
	}
	lt, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lt.Tools {
		if tl.Name == "image" && tl.OutputSchema != nil {
			t.Errorf("a tool without an output schema declares %v", tl.OutputSchema)
		}
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "image"})
	if err != nil || len(res.Content) != 1 {
		t.Fatalf("image: %v %+v", err, res)
	}
	if img, ok := res.Content[0].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" {
		t.Fatalf("image content %+v", res.Content[0])
	}
}

type toolsPlugin struct{ t core.Tool }

func (toolsPlugin) Name() string         { return "extras" }
func (p toolsPlugin) Tools() []core.Tool { return []core.Tool{p.t} }

func TestInitRefusesUnknownNames(t *testing.T) {
	for name, opts := range map[string]mcpserver.Options{
		"agent": {Agents: []string{"nobody"}},
		"skill": {Skills: []mcpserver.SkillRef{{Agent: "echo", Skill: "none"}}},
		"tool":  {Tools: []mcpserver.ToolRef{{Tool: "none"}}},
		"dup":   {Agents: []string{"echo"}, Tools: []mcpserver.ToolRef{{Tool: "echo"}}},
	} {
		p, err := mcpserver.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		in := mustEngine(t, p, toolsPlugin{core.Tool{Name: "echo", Execute: func(context.Context, json.RawMessage, core.ToolContext) (any, error) { return nil, nil }}})
		if err := in.Start(t.Context()); err == nil {
			t.Errorf("%s: Start accepted %+v", name, opts)
			_ = in.Stop(t.Context())
		}
	}
	if _, err := mcpserver.New(mcpserver.Options{Tasks: []string{"x"}}); err == nil {
		t.Error("tasks without RunTask were accepted")
	}
}
