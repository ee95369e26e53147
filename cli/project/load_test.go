package project_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/cli/project"
	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine"
)

// writeProject writes files (path → content) under a temp dir.
func writeProject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for path, content := range files {
		full := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func env(m map[string]string) project.Options {
	return project.Options{LookupEnv: func(k string) (string, bool) { v, ok := m[k]; return v, ok }}
}

const fullConfig = `entrypoints: [writer, boss]
store: {type: sqlite, path: ./bread.db}
transport: httpchunked
blobs: {dir: ./.bread/blobs}
credentials: {type: vault, address: http://vault:8200, token: ${VAULT_TOKEN}}
providers:
  anthropic: {}
  eu: {type: openai, baseURL: https://eu.example}
plugins:
  - {type: otel, endpoint: http://collector:4318}
decisions:
  triage: {type: model, provider: anthropic, model: haiku}
remoteAgents:
  researcher: {url: http://remote:3000}
pipelines:
  article:
    - {type: agent, agentId: writer}
    - type: parallel
      steps:
        - {agentId: writer, skill: deep_research}
        - {type: map, agentId: boss}
    - {type: route, decider: triage, routes: {a: writer, b: researcher}}
server: {port: 4000, host: 0.0.0.0, maxBodyBytes: 2048, auth: {type: apikey, keys: [k1]}, timeouts: {readHeader: 5s, idle: 1m, bodyRead: 20s}}
errorHandling: {retry: {attempts: 3, backoffMs: 100}}
concurrency: {max: 8, session: enqueue}
`

func TestLoadAFullProject(t *testing.T) {
	dir := writeProject(t, map[string]string{
		"bread.yaml": fullConfig,
		"agents/writer/agent.yaml": `description: Writes.
model: {provider: ${PROVIDER:-anthropic}, model: claude, settings: {temperature: 0.2, maxOutputTokens: 500}}
inputSchema:
  type: object
  required: [topic]
  properties: {topic: {type: string}}
output: {format: markdown}
steps: {max: 7}
permissions: {allow: ["tool:*"], ask: ["tool:publish"], deny: ["plugin:*"]}
tasks: [extract]
knowledge: {autoInject: true, maxTokens: 100}
documents: {root: ./docs, allowHosts: [docs.example.com]}
errorHandling: {retry: {attempts: 2}}
concurrency: interrupt
plugins: {mcp_client: {servers: [fs]}}
`,
		"agents/writer/prompt.md": "  You write.\n",
		"agents/writer/tools/search.yaml": `description: Search.
command: ["./search.sh"]
timeout: 5s
credentials: [SEARCH_KEY]
inputSchema: {type: object, properties: {q: {type: string}}}
`,
		"agents/writer/tools/publish.yaml":                       "type: http\nurl: https://api.example/publish\nmethod: put\nheaders: {Authorization: \"Bearer ${TOKEN}\"}\n",
		"agents/writer/tools/approve.yaml":                       "type: human\nprompt: Publish?\nschema: {type: object}\n",
		"agents/writer/skills/deep_research/SKILL.md":            "---\nname: Deep Research\ndescription: \"Cites sources.\"\n---\nCite everything.\n",
		"agents/writer/skills/deep_research/references/style.md": "Footnotes.",
		"agents/writer/skills/deep_research/scripts/cite.yaml":   "command: echo '\"[1]\"'\n",
		"agents/writer/evals/quality.eval.yaml": `cases:
  - name: mentions the topic
    input: {topic: bread}
    scorers:
      - {type: contains, expected: bread}
      - {type: regex, pattern: "\\bbread\\b"}
      - {type: llmJudge, prompt: Helpful?}
      - {type: custom, command: [./check.sh]}
`,
		"agents/boss/agent.yaml": `model: {provider: eu, model: gpt}
output: {format: json}
outputSchema: {type: object}
supervisor: {max: 2, agents: [{agentId: writer, visibility: mediate}, {agentId: researcher}]}
loop: {pool: [writer], maxIterations: 3}
`,
		"tasks/extract.yaml": "description: Extract.\nmodel: {provider: anthropic, model: haiku}\ninstructions: List entities.\noutputSchema: {type: object}\n",
	})
	p, err := project.Load(dir, env(map[string]string{"VAULT_TOKEN": "s.tok", "TOKEN": "t0"}))
	if err != nil {
		t.Fatal(err)
	}
	c := p.Config
	if c.Store.Type != "sqlite" || c.Store.String("path") != "./bread.db" || c.Transport.Type != "httpchunked" || c.BlobStore.Type != "fs" {
		t.Errorf("components %+v %+v %+v", c.Store, c.Transport, c.BlobStore)
	}
	if c.Credentials.String("token") != "s.tok" || c.Providers["eu"].Type != "openai" || c.Providers["anthropic"].Type != "anthropic" {
		t.Errorf("credentials/providers %+v %+v", c.Credentials, c.Providers)
	}
	if c.Server.Port != 4000 || len(c.Server.Auth) != 1 || c.Server.Auth[0].Type != "apikey" || c.Server.Auth[0].Line != 23 || c.MaxConcurrentRuns != 8 || c.ErrorHandling.Retry.Attempts != 3 {
		t.Errorf("server %+v", c.Server)
	}
	if c.SessionConcurrency != core.ConcurrencyEnqueue {
		t.Errorf("concurrency.session = %q, want enqueue", c.SessionConcurrency)
	}
	if to := c.Server.Timeouts; to.ReadHeader != 5*time.Second || to.Idle != time.Minute || to.BodyRead != 20*time.Second {
		t.Errorf("timeouts %+v", to)
	}
	if c.RemoteAgents["researcher"].Type != "httpchunked" || c.Decisions["triage"].String("model") != "haiku" || len(c.Plugins) != 1 {
		t.Errorf("remote/decisions/plugins")
	}
	steps := c.Pipelines["article"]
	if len(steps) != 3 || steps[1].Steps[0].Type != core.StepAgent || steps[1].Steps[1].Type != core.StepMap || steps[2].Routes["b"] != "researcher" {
		t.Errorf("pipeline %+v", steps)
	}
	if c.Store.Line != 2 || c.Store.File != "bread.yaml" {
		t.Errorf("components know their place: %s:%d", c.Store.File, c.Store.Line)
	}

	w, _ := p.Agent("writer")
	if w.Prompt != "You write." || w.Model.Provider != "anthropic" || *w.Model.Settings.Temperature != 0.2 || w.MaxSteps != 7 || w.Output.Format != "markdown" {
		t.Errorf("writer %+v", w)
	}
	if !strings.Contains(string(w.InputSchema), `"required":["topic"]`) || w.Knowledge.MaxTokens != 100 || w.Documents.Root != filepath.Join(p.Dir, "docs") || !slices.Equal(w.Documents.AllowHosts, []string{"docs.example.com"}) {
		t.Errorf("writer schema/knowledge/documents")
	}
	if len(w.Tools) != 2 || len(w.HumanTools) != 1 || w.HumanTools[0].Prompt != "Publish?" || w.Tools[1].Credentials[0] != "SEARCH_KEY" {
		t.Errorf("tools %+v humans %+v", w.Tools, w.HumanTools)
	}
	if len(w.Skills) != 1 || w.Skills[0].Name != "Deep Research" || w.Skills[0].Description != "Cites sources." || w.Skills[0].Instructions != "Cite everything." || len(w.Skills[0].References) != 1 || len(w.Skills[0].Tools) != 1 {
		t.Errorf("skills %+v", w.Skills)
	}
	if w.Plugins["mcp_client"] == nil {
		t.Errorf("plugin config %v", w.Plugins)
	}
	b, _ := p.Agent("boss")
	if w.Concurrency != core.ConcurrencyInterrupt || b.Concurrency != "" {
		t.Errorf("agent concurrency: writer %q (want interrupt), boss %q (want unset)", w.Concurrency, b.Concurrency)
	}
	if b.Supervisor.Agents[0].Visibility != core.Mediate || b.Loop.MaxIterations != 3 {
		t.Errorf("boss %+v", b)
	}
	if len(p.Tasks) != 1 || p.Tasks[0].Name != "extract" {
		t.Errorf("tasks %+v", p.Tasks)
	}
	if len(p.Evals) != 1 || p.Evals[0].AgentID != "writer" || len(p.Evals[0].Cases[0].Scorers) != 4 || p.Evals[0].Type != "functional" {
		t.Errorf("evals %+v", p.Evals)
	}
	// The loaded agents pass core's own validation.
	if _, err := engine.New(engine.Config{Store: nopStore{}, Agents: p.Agents, Tasks: p.Tasks, Plugins: []core.BreadPlugin{mcpStub{}}}); err != nil {
		t.Errorf("core rejects the loaded project: %v", err)
	}
}

func TestConfigErrorsNameFileAndLine(t *testing.T) {
	base := map[string]string{
		"bread.yaml":          "entrypoints: [a]\nstore: memory\n",
		"agents/a/agent.yaml": "model: {provider: p, model: m}\n",
		"agents/a/prompt.md":  "hi",
	}
	tests := []struct {
		name    string
		files   map[string]string
		wantLoc string
		code    string
	}{
		{"typo in bread.yaml", map[string]string{"bread.yaml": "entrypoints: [a]\nstroe: memory\n"}, "bread.yaml:2", core.CodeInvalidConfig},
		{"typo in agent.yaml", map[string]string{"agents/a/agent.yaml": "model:\n  provider: p\n  modle: m\n"}, "agents/a/agent.yaml:3", core.CodeInvalidConfig},
		{"unset variable", map[string]string{"agents/a/agent.yaml": "model:\n  provider: ${NOPE}\n  model: m\n"}, "agents/a/agent.yaml:2", core.CodeInvalidConfig},
		{"output schema that does not compile", map[string]string{"agents/a/agent.yaml": "model: {provider: p, model: m}\noutputSchema:\n  type: strng\n"}, "agents/a/agent.yaml:3", core.CodeInvalidConfig},
		{"bad selector", map[string]string{"agents/a/agent.yaml": "model: {provider: p, model: m}\npermissions:\n  deny:\n    - \"mpc:*\"\n"}, "agents/a/agent.yaml:4", core.CodeInvalidPermission},
		{"unknown entrypoint", map[string]string{"bread.yaml": "store: memory\nentrypoints:\n  - a\n  - ghost\n"}, "bread.yaml:4", core.CodeInvalidConfig},
		{"pipeline names unknown agent", map[string]string{"bread.yaml": "store: memory\npipelines:\n  p:\n    - agentId: a\n    - agentId: ghost\n"}, "bread.yaml:5", core.CodeInvalidConfig},
		{"unknown task", map[string]string{"agents/a/agent.yaml": "model: {provider: p, model: m}\ntasks:\n  - ghost_task\n"}, "agents/a/agent.yaml:3", core.CodeTaskNotFound},
		{"bad tool name", map[string]string{"agents/a/tools/Web-Search.yaml": "command: echo\n"}, "agents/a/tools/Web-Search.yaml", core.CodeInvalidName},
		{"bad tool type", map[string]string{"agents/a/tools/x.yaml": "name: x\ntype: rpc\n"}, "agents/a/tools/x.yaml:2", core.CodeInvalidConfig},
		{"command missing", map[string]string{"agents/a/tools/x.yaml": "name: x\ntimeout: 2s\n"}, "agents/a/tools/x.yaml", core.CodeInvalidConfig},
		{"bad timeout", map[string]string{"agents/a/tools/x.yaml": "name: x\ncommand: echo\ntimeout: soon\n"}, "agents/a/tools/x.yaml:3", core.CodeInvalidConfig},
		{"model incomplete", map[string]string{"agents/a/agent.yaml": "description: x\nmodel:\n  provider: p\n"}, "agents/a/agent.yaml:3", core.CodeInvalidConfig},
		{"custom format from yaml", map[string]string{"agents/a/agent.yaml": "model: {provider: p, model: m}\noutput:\n  format: csv\n"}, "agents/a/agent.yaml:3", core.CodeInvalidConfig},
		{"no agent.yaml", map[string]string{"agents/b/prompt.md": "x"}, "agents/b", core.CodeInvalidConfig},
		{"eval scorer", map[string]string{"agents/a/evals/q.eval.yaml": "cases:\n  - name: c\n    input: x\n    scorers:\n      - type: fuzzy\n"}, "agents/a/evals/q.eval.yaml:5", core.CodeInvalidConfig},
		{"unclosed frontmatter", map[string]string{"agents/a/skills/s/SKILL.md": "---\nname: S\n"}, "agents/a/skills/s/SKILL.md:1", core.CodeInvalidConfig},
		{"route decider", map[string]string{"bread.yaml": "store: memory\npipelines:\n  p:\n    - type: route\n      decider: nobody\n"}, "bread.yaml:5", core.CodeInvalidConfig},
		{"auth element without a type", map[string]string{"bread.yaml": "store: memory\nserver:\n  auth:\n    - {type: jwt}\n    - {keys: [k]}\n"}, "bread.yaml:5", core.CodeInvalidConfig},
		{"empty auth list", map[string]string{"bread.yaml": "store: memory\nserver:\n  auth: []\n"}, "bread.yaml:3", core.CodeInvalidConfig},
		{"unknown busy-session policy", map[string]string{"agents/a/agent.yaml": "model: {provider: p, model: m}\nconcurrency: queue\n"}, "agents/a/agent.yaml:2", core.CodeInvalidConfig},
		{"unknown default busy-session policy", map[string]string{"bread.yaml": "entrypoints: [a]\nstore: memory\nconcurrency:\n  max: 4\n  session: wait\n"}, "bread.yaml:5", core.CodeInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range base {
				files[k] = v
			}
			for k, v := range tt.files {
				files[k] = v
			}
			_, err := project.Load(writeProject(t, files), env(nil))
			var pe *project.Error
			if !errors.As(err, &pe) {
				t.Fatalf("want a *project.Error, got %v", err)
			}
			if !strings.HasPrefix(err.Error(), tt.wantLoc) {
				t.Errorf("error %q does not start with %q", err, tt.wantLoc)
			}
			var be *core.BreadError
			if !errors.As(err, &be) || be.Code != tt.code {
				t.Errorf("code %v, want %s", err, tt.code)
			}
		})
	}
}

func TestNotAProject(t *testing.T) {
	_, err := project.Load(t.TempDir(), env(nil))
	if err == nil || !strings.Contains(err.Error(), "no bread.yaml") {
		t.Fatalf("got %v", err)
	}
}

func TestExpandEscapes(t *testing.T) {
	dir := writeProject(t, map[string]string{
		"bread.yaml":          "store: memory\n",
		"agents/a/agent.yaml": "description: \"costs $${PRICE}\"\nmodel: {provider: p, model: m}\n",
	})
	p, err := project.Load(dir, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if p.Agents[0].Description != "costs ${PRICE}" {
		t.Errorf("got %q", p.Agents[0].Description)
	}
}

// TestExpandInsideScalars: ${VAR} is expanded in the parsed values, so a
// value holding ": ", " #", "," or braces stays one string, in block and
// flow context; an unquoted lone reference takes its YAML type; a reference
// in a comment is not read.
func TestExpandInsideScalars(t *testing.T) {
	vars := map[string]string{"DESC": "a: b # not a comment, {x}", "PORT": "8080", "KEY": "k1, k2]", "MODEL": "m"}
	dir := writeProject(t, map[string]string{
		"bread.yaml":          "store: memory\n# ${UNSET_IN_COMMENT}\nserver:\n  port: ${PORT}\n  auth: {type: apikey, keys: [${KEY}]}\n",
		"agents/a/agent.yaml": "description: ${DESC}\nmodel: {provider: p, model: \"${MODEL}\"}\n",
		"agents/b/agent.yaml": "description: |\n  say ${DESC}\nmodel: {provider: p, model: m}\n",
		"agents/c/agent.yaml": "description: __bread_var_0__ and ${X:-x}\nmodel: {provider: p, model: m}\n",
	})
	p, err := project.Load(dir, env(vars))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Agents[0].Description; got != vars["DESC"] {
		t.Errorf("description = %q, want %q", got, vars["DESC"])
	}
	if got := p.Agents[2].Description; got != "__bread_var_0__ and x" {
		t.Errorf("a file spelling the placeholder = %q, want it kept and the reference expanded", got)
	}
	if got := p.Agents[1].Description; got != "say "+vars["DESC"]+"\n" {
		t.Errorf("block scalar = %q", got)
	}
	if p.Agents[0].Model.Model != "m" {
		t.Errorf("model = %+v", p.Agents[0].Model)
	}
	if p.Config.Server.Port != 8080 {
		t.Errorf("port = %d, want 8080 (a lone unquoted reference is typed)", p.Config.Server.Port)
	}
	keys, _ := p.Config.Server.Auth[0].Options["keys"].([]any)
	if len(keys) != 1 || keys[0] != vars["KEY"] {
		t.Errorf("keys = %#v, want the one key %q", keys, vars["KEY"])
	}

	// An unset variable is an error at its own line, also in flow context.
	dir = writeProject(t, map[string]string{
		"bread.yaml":          "store: memory\nserver:\n  auth: {type: apikey,\n    keys: [${NOPE}]}\n",
		"agents/a/agent.yaml": "model: {provider: p, model: m}\n",
	})
	if _, err := project.Load(dir, env(nil)); err == nil || !strings.HasPrefix(err.Error(), "bread.yaml:4:") || !strings.Contains(err.Error(), "NOPE") {
		t.Fatalf("unset variable: %v, want an error at bread.yaml:4 naming NOPE", err)
	}
}

func loadTool(t *testing.T, files map[string]string, name string) core.Tool {
	t.Helper()
	files["bread.yaml"] = "store: memory\n"
	files["agents/a/agent.yaml"] = "model: {provider: p, model: m}\n"
	p, err := project.Load(writeProject(t, files), env(map[string]string{"TOKEN": "secret"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range p.Agents[0].Tools {
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %s", name)
	return core.Tool{}
}

type creds map[string]string

func (c creds) Get(_ context.Context, name string) (string, error) {
	if v, ok := c[name]; ok {
		return v, nil
	}
	return "", errors.New("no " + name)
}

func TestCommandTool(t *testing.T) {
	tc := core.ToolContext{AgentID: "a", RunID: "r", SessionID: "s", Credentials: creds{"KEY": "k-1"}}
	tests := []struct {
		name    string
		script  string
		yaml    string
		want    string
		errLike string
	}{
		{"json in, json out", "#!/bin/sh\nread line; echo \"{\\\"got\\\":$line,\\\"key\\\":\\\"$KEY\\\",\\\"agent\\\":\\\"$BREAD_AGENT_ID\\\"}\"\n", "command: [./t.sh]\ncredentials: [KEY]\n", `{"got":{"q":1},"key":"k-1","agent":"a"}`, ""},
		{"text out", "#!/bin/sh\necho plain words\n", "command: [./t.sh]\n", `"plain words"`, ""},
		{"non-zero exit", "#!/bin/sh\necho broken >&2\nexit 3\n", "command: [./t.sh]\n", "", "exit status 3: broken"},
		{"stderr is an error", "#!/bin/sh\necho warn >&2\necho '{}'\n", "command: [./t.sh]\n", "", "wrote to stderr: warn"},
		{"timeout", "#!/bin/sh\nsleep 5\n", "command: [./t.sh]\ntimeout: 100ms\n", "", "timed out"},
		{"shell string", "", "command: echo hi from sh\n", `"hi from sh"`, ""},
		{"server env stays out", "#!/bin/sh\necho \"[$BREAD_SECRET_ENV]\"\n", "command: [./t.sh]\n", `[]`, ""},
	}
	t.Setenv("BREAD_SECRET_ENV", "leak")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"agents/a/tools/t.yaml": "name: t\n" + tt.yaml}
			if tt.script != "" {
				files["agents/a/t.sh"] = tt.script
			}
			tool := loadTool(t, files, "t")
			out, err := tool.Execute(context.Background(), json.RawMessage(`{"q":1}`), tc)
			if tt.errLike != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errLike) {
					t.Fatalf("error %v, want %q", err, tt.errLike)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(out)
			if string(b) != tt.want {
				t.Errorf("got %s, want %s", b, tt.want)
			}
		})
	}
}

func TestHTTPTool(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/fail":
			http.Error(w, "nope", http.StatusTeapot)
		case "/get":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"q":"` + r.URL.Query().Get("q") + `","method":"` + r.Method + `"}`))
		default:
			b := make([]byte, 100)
			n, _ := r.Body.Read(b)
			_, _ = w.Write([]byte(`{"auth":"` + r.Header.Get("Authorization") + `","body":` + string(b[:n]) + `}`))
		}
	}))
	defer srv.Close()
	files := map[string]string{
		"agents/a/tools/post.yaml": "type: http\nurl: " + srv.URL + "/post\nheaders: {Authorization: \"Bearer ${TOKEN}\"}\n",
		"agents/a/tools/get.yaml":  "url: " + srv.URL + "/get\nmethod: get\n",
		"agents/a/tools/fail.yaml": "type: http\nurl: " + srv.URL + "/fail\n",
	}
	tc := core.ToolContext{}
	out, err := loadTool(t, files, "post").Execute(context.Background(), json.RawMessage(`{"a":1}`), tc)
	if b, _ := json.Marshal(out); err != nil || string(b) != `{"auth":"Bearer secret","body":{"a":1}}` {
		t.Errorf("post: %s %v", b, err)
	}
	out, err = loadTool(t, files, "get").Execute(context.Background(), json.RawMessage(`{"q":"rye"}`), tc)
	if b, _ := json.Marshal(out); err != nil || string(b) != `{"q":"rye","method":"GET"}` {
		t.Errorf("get: %s %v", b, err)
	}
	_, err = loadTool(t, files, "fail").Execute(context.Background(), json.RawMessage(`{}`), tc)
	if err == nil || !strings.Contains(err.Error(), "HTTP 418") {
		t.Errorf("fail: %v", err)
	}
	_ = time.Second
}

// nopStore satisfies core.BreadStore and core.LoopStore for an engine.New
// validation check.
type nopStore struct {
	core.BreadStore
	core.LoopStore
}

func TestAuthListKeepsOrderAndLines(t *testing.T) {
	dir := writeProject(t, map[string]string{
		"bread.yaml": "store: memory\nserver:\n  auth:\n    - type: trusted\n      proxies: [10.0.0.0/8]\n    - {type: jwt, secret: x}\n    - apikey\n",
	})
	p, err := project.Load(dir, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range p.Config.Server.Auth {
		got = append(got, fmt.Sprintf("%s@%d", c.Type, c.Line))
	}
	if strings.Join(got, " ") != "trusted@4 jwt@6 apikey@7" {
		t.Fatalf("auth components %v", got)
	}
}

func TestBusStreamsAndListeners(t *testing.T) {
	dir := writeProject(t, map[string]string{
		"bread.yaml": "store: memory\nbus: {type: redis, url: \"redis://r:6379/0\"}\nstreams: {heartbeat: 5s}\nlisteners:\n  - stdout\n  - {type: stdout, verbose: true}\ntransport: httpsse\n",
	})
	p, err := project.Load(dir, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	c := p.Config
	if c.Bus.Type != "redis" || c.Bus.String("url") != "redis://r:6379/0" || c.Bus.Line != 2 {
		t.Errorf("bus %+v", c.Bus)
	}
	if c.Streams.Heartbeat != 5*time.Second {
		t.Errorf("streams %+v", c.Streams)
	}
	if len(c.Listeners) != 2 || c.Listeners[0].Type != "stdout" || !c.Listeners[1].Bool("verbose") || c.Listeners[1].Line != 6 {
		t.Errorf("listeners %+v", c.Listeners)
	}
	if c.Transport.Type != "httpsse" {
		t.Errorf("the older transport: key is kept as written: %+v", c.Transport)
	}

	for _, tt := range []struct{ yaml, loc string }{
		{"store: memory\nstreams:\n  heartbeat: soon\n", "bread.yaml:3"},
		{"store: memory\nstreams:\n  heartbeat: -1s\n", "bread.yaml:3"},
		{"store: memory\nstreams:\n  hartbeat: 1s\n", "bread.yaml:3"},
		{"store: memory\nlisteners:\n  - {verbose: true}\n", "bread.yaml:3"},
		{"store: memory\nbus: {url: x}\n", "bread.yaml:2"},
		{"store: memory\nserver:\n  port: 99999\n", "bread.yaml:3"},
		{"store: memory\nserver:\n  port: -1\n", "bread.yaml:3"},
		{"store: memory\nserver:\n  maxBodyBytes: -5\n", "bread.yaml:3"},
		{"store: memory\nserver:\n  timeouts:\n    idle: forever\n", "bread.yaml:4"},
		{"store: memory\nserver:\n  timeouts:\n    readHeader: 0s\n", "bread.yaml:4"},
		{"store: memory\nserver:\n  timeouts:\n    bodyRed: 1s\n", "bread.yaml:4"},
	} {
		_, err := project.Load(writeProject(t, map[string]string{"bread.yaml": tt.yaml}), env(nil))
		var be *core.BreadError
		if !errors.As(err, &be) || be.Code != core.CodeInvalidConfig || !strings.HasPrefix(err.Error(), tt.loc) {
			t.Errorf("%q: %v, want INVALID_CONFIG at %s", tt.yaml, err, tt.loc)
		}
	}
}

func TestServerConsoleFlag(t *testing.T) {
	for yaml, want := range map[string]bool{
		"store: memory\n": false,
		"store: memory\nserver:\n  console: true\n":  true,
		"store: memory\nserver:\n  console: false\n": false,
	} {
		p, err := project.Load(writeProject(t, map[string]string{"bread.yaml": yaml}), env(nil))
		if err != nil {
			t.Fatal(err)
		}
		if p.Config.Server.Console != want {
			t.Errorf("%q: console = %v", yaml, p.Config.Server.Console)
		}
	}
	_, err := project.Load(writeProject(t, map[string]string{"bread.yaml": "store: memory\nserver:\n  console: maybe\n"}), env(nil))
	if err == nil || !strings.Contains(err.Error(), "bread.yaml:3") {
		t.Errorf("a console that is not a boolean: %v", err)
	}
}

// mcpStub stands for the mcp_client plugin the full project's writer denies
// (plugin:*): a resolver of tools only known at run time.
type mcpStub struct{}

func (mcpStub) Name() string { return "mcp_client" }

func (mcpStub) ResolveAgentTools(context.Context, *core.Agent) ([]core.Tool, error) { return nil, nil }
