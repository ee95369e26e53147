package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/cli"
	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/sqlite"
	"github.com/breadai/bread/typed"
)

var binary string // the bread binary, built once by TestMain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bread-cli-test")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "bread")
	build := exec.Command("go", "build", "-o", binary, "./cmd/bread")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("building bread: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// project writes a project from files (path → content) into a temp dir.
func project(t *testing.T, files map[string]string) string {
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

// transcript returns replay JSONL lines for calls of text answers; a call
// given as "raw:" and a JSON event line is used as is (with call N).
func transcript(calls ...string) string {
	var b strings.Builder
	for i, c := range calls {
		if raw, ok := strings.CutPrefix(c, "raw:"); ok {
			b.WriteString(strings.ReplaceAll(raw, `"call":N`, `"call":`+itoa(i)) + "\n")
			b.WriteString(`{"call":` + itoa(i) + `,"type":"finish","finishReason":"tool-calls"}` + "\n")
			continue
		}
		line, _ := json.Marshal(map[string]any{"call": i, "type": "text-delta", "delta": c})
		b.Write(line)
		b.WriteString("\n")
		b.WriteString(`{"call":` + itoa(i) + `,"type":"finish","finishReason":"stop"}` + "\n")
	}
	return b.String()
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// basic is a one-agent project answering "Hello there." offline.
func basic(extra map[string]string) map[string]string {
	files := map[string]string{
		"bread.yaml":             "entrypoints: [echo]\nstore: {type: sqlite, path: ./bread.db}\n",
		"agents/echo/agent.yaml": "model: {provider: replay, model: t/echo.jsonl}\ninputSchema: {type: string}\noutputSchema: {type: string}\n",
		"agents/echo/prompt.md":  "Echo.",
		"t/echo.jsonl":           transcript("Hello there."),
	}
	for k, v := range extra {
		files[k] = v
	}
	return files
}

type result struct {
	code           int
	stdout, stderr string
}

// run runs the CLI in-process.
func run(t *testing.T, opts cli.Options, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	opts.Args = args
	opts.Stdout, opts.Stderr = &out, &errOut
	if opts.Stdin == nil {
		opts.Stdin = strings.NewReader("")
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = func(string) (string, bool) { return "", false }
	}
	code := cli.Main(opts)
	return result{code, out.String(), errOut.String()}
}

func TestInvoke(t *testing.T) {
	dir := project(t, basic(map[string]string{
		"agents/ask/agent.yaml":         "model: {provider: replay, model: t/ask.jsonl}\n",
		"agents/ask/tools/confirm.yaml": "type: human\nprompt: Sure?\n",
		"t/ask.jsonl":                   transcript(`raw:{"call":N,"type":"tool-call","toolCallId":"c1","toolName":"human_confirm","input":{}}`),
		"agents/tooly/agent.yaml":       "model: {provider: replay, model: t/tooly.jsonl}\n",
		"agents/tooly/tools/now.yaml":   "command: echo '{\"hour\":9}'\n",
		"t/tooly.jsonl":                 transcript(`raw:{"call":N,"type":"tool-call","toolCallId":"c1","toolName":"tool_now","input":{}}`, "It is nine."),
	}))
	tests := []struct {
		name      string
		args      []string
		stdin     string
		code      int
		stdout    string
		stderrHas string
	}{
		{"text", []string{"invoke", "echo", "hi"}, "", 0, "Hello there.\n", ""},
		{"json", []string{"invoke", "echo", "hi", "--json"}, "", 0, "\"Hello there.\"\n", ""},
		{"stdin", []string{"invoke", "echo"}, "from stdin\n", 0, "Hello there.\n", ""},
		{"flags before the agent", []string{"invoke", "--json", "echo", "hi"}, "", 0, "\"Hello there.\"\n", ""},
		{"human tool refused", []string{"invoke", "ask", "go"}, "", cli.ExitNeedsHITL, "", "needs a human (human_confirm"},
		{"trace to stderr", []string{"invoke", "tooly", "time?", "--trace"}, "", 0, "It is nine.\n", "tool_now"},
		{"unknown agent", []string{"invoke", "ghost", "x"}, "", cli.ExitFailure, "", "AGENT_NOT_FOUND"},
		{"input invalid", []string{"invoke", "echo", `{"not":"a string"}`}, "", cli.ExitFailure, "", "VALIDATION_ERROR"},
		{"usage", []string{"invoke"}, "", cli.ExitUsage, "", "usage: bread invoke"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, cli.Options{Stdin: strings.NewReader(tt.stdin)}, append(tt.args, "--cwd", dir)...)
			if r.code != tt.code || (tt.stdout != "" && r.stdout != tt.stdout) || !strings.Contains(r.stderr, tt.stderrHas) {
				t.Errorf("code %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
			}
		})
	}
}

func TestBuild(t *testing.T) {
	ok := project(t, basic(nil))
	if r := run(t, cli.Options{}, "build", "--cwd", ok); r.code != 0 || !strings.Contains(r.stdout, "1 agent(s) ok") {
		t.Errorf("%+v", r)
	}
	bad := project(t, basic(map[string]string{
		"agents/echo/agent.yaml": "model: {provider: nowhere, model: m}\n",
	}))
	r := run(t, cli.Options{}, "build", "--cwd", bad)
	for _, want := range []string{`warning: agents/echo/agent.yaml: agent "echo" has no inputSchema`, `warning: agents/echo/agent.yaml: agent "echo" has no outputSchema`,
		`agents/echo/agent.yaml:1: UNKNOWN_PROVIDER: Agent "echo" uses unknown provider "nowhere"`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("build output lacks %q:\n%s", want, r.stderr)
		}
	}
	if r.code != cli.ExitFailure || !strings.Contains(r.stderr, "build failed: 1 problem(s)") {
		t.Errorf("one line per problem, non-zero exit: %+v", r)
	}
}

func TestConfigErrorsNameFileAndLine(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"typo", map[string]string{"agents/echo/agent.yaml": "model:\n  provider: replay\n  modle: x\n"}, "agents/echo/agent.yaml:3"},
		{"unknown store", map[string]string{"bread.yaml": "entrypoints: [echo]\nstore: mongo\n"}, "bread.yaml:2: INVALID_CONFIG: unknown store \"mongo\"; known: memory, mysql, postgres, sqlite"},
		{"no store", map[string]string{"bread.yaml": "entrypoints: [echo]\n"}, "STORE_NOT_CONFIGURED"},
		{"unknown transport", map[string]string{"bread.yaml": "store: memory\ntransport: carrier-pigeon\n"}, "known: httpchunked, httpsse, redis, stdout"},
		{"unknown plugin", map[string]string{"bread.yaml": "store: memory\nplugins:\n  - telepathy\n"}, "bread.yaml:3"},
		{"store option typo", map[string]string{"bread.yaml": "store: {type: sqlite, paht: x.db}\n"}, "bread.yaml:1: INVALID_CONFIG: sqlite options"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := project(t, basic(tt.files))
			r := run(t, cli.Options{}, "invoke", "echo", "hi", "--cwd", dir)
			if r.code != cli.ExitFailure || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("code %d stderr %q, want %q", r.code, r.stderr, tt.want)
			}
		})
	}
}

func TestEval(t *testing.T) {
	files := basic(map[string]string{
		"agents/echo/evals/good.eval.yaml": "cases:\n  - name: says hello\n    input: hi\n    scorers:\n      - {type: contains, expected: Hello}\n      - {type: regex, pattern: '^Hello'}\n      - {type: exact, expected: Hello there.}\n      - {type: custom, command: \"grep -q there\"}\n",
	})
	pass := project(t, files)
	r := run(t, cli.Options{}, "eval", "--cwd", pass)
	if r.code != 0 || !strings.Contains(r.stdout, "all") || !strings.Contains(r.stderr, "✓ agents/echo/evals/good.eval.yaml › says hello") {
		t.Errorf("passing eval: %+v", r)
	}
	files["agents/echo/evals/bad.eval.yaml"] = "type: jailbreak\ncases:\n  - name: refuses\n    input: hi\n    scorers:\n      - {type: contains, expected: I cannot}\n"
	fail := project(t, files)
	r = run(t, cli.Options{}, "eval", "--cwd", fail)
	if r.code != cli.ExitFailure || !strings.Contains(r.stderr, "✗ agents/echo/evals/bad.eval.yaml › refuses") || !strings.Contains(r.stdout, "jailbreak") {
		t.Errorf("failing eval: %+v", r)
	}
	scoped := run(t, cli.Options{}, "eval", filepath.Join(fail, "agents/echo/evals/good.eval.yaml"), "--cwd", fail)
	if scoped.code != 0 {
		t.Errorf("eval scoped to a path: %+v", scoped)
	}
	// Each run is kept in the project's store: the eval history the
	// console charts.
	if !strings.Contains(scoped.stderr, "kept in the eval history: echo, 1/1 passed") {
		t.Errorf("the scoped run does not say it was kept: %s", scoped.stderr)
	}
	st, err := sqlite.New(sqlite.Options{Path: filepath.Join(fail, "bread.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.ListEvalRuns(t.Context(), core.EvalRunFilter{AgentID: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Passed != 1 || runs[0].Total != 1 || runs[1].Passed != 1 || runs[1].Total != 2 || runs[0].CreatedAt < runs[1].CreatedAt {
		t.Fatalf("the eval history: %+v", runs)
	}
	full, err := st.GetEvalRun(t.Context(), runs[1].ID)
	if err != nil || len(full.Results) != 2 || full.Results[0].Case != "refuses" || full.Results[0].Passed || !full.Results[1].Passed {
		t.Errorf("the failing run's cases: %+v %v", full, err)
	}
}

func TestEvalJudgeModelOrder(t *testing.T) {
	files := basic(map[string]string{
		"agents/echo/evals/judged.eval.yaml": "cases:\n  - name: judged\n    input: hi\n    scorers:\n      - {type: llmJudge, prompt: Is it a greeting?, model: replay/t/no.jsonl}\n",
		"t/yes.jsonl":                        transcript(`{"pass":true,"reason":"a greeting"}`),
		"t/no.jsonl":                         transcript(`{"pass":false,"reason":"not a greeting"}`),
	})
	dir := project(t, files)
	r := run(t, cli.Options{}, "eval", "--cwd", dir)
	if r.code != cli.ExitFailure || !strings.Contains(r.stderr, "llmJudge (replay:t/no.jsonl): not a greeting") {
		t.Errorf("the scorer's model: %+v", r)
	}
	env := func(k string) (string, bool) {
		if k == "BREAD_EVAL_MODEL" {
			return "replay/t/yes.jsonl", true
		}
		return "", false
	}
	if r := run(t, cli.Options{LookupEnv: env}, "eval", "--cwd", dir); r.code != 0 {
		t.Errorf("BREAD_EVAL_MODEL wins: %+v", r)
	}
}

func TestSessions(t *testing.T) {
	dir := project(t, basic(nil))
	run(t, cli.Options{}, "invoke", "echo", "hi", "-s", "kept", "--cwd", dir)
	r := run(t, cli.Options{}, "sessions", "list", "--cwd", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "kept") {
		t.Errorf("list: %+v", r)
	}
	if r := run(t, cli.Options{}, "sessions", "cleanup", "--cwd", dir); r.code != cli.ExitUsage {
		t.Errorf("cleanup without --older-than must refuse: %+v", r)
	}
	if r := run(t, cli.Options{}, "sessions", "cleanup", "--older-than", "30", "--cwd", dir); r.code != 0 || !strings.Contains(r.stdout, "deleted 0") {
		t.Errorf("cleanup: %+v", r)
	}
}

func TestInit(t *testing.T) {
	dir := t.TempDir()
	if r := run(t, cli.Options{}, "init", "--cwd", dir); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	if r := run(t, cli.Options{}, "invoke", "assistant", "Hello!", "--cwd", dir); r.code != 0 || !strings.Contains(r.stdout, "Hello!") {
		t.Errorf("a fresh project runs offline: %+v", r)
	}
	if r := run(t, cli.Options{}, "eval", "--cwd", dir); r.code != 0 {
		t.Errorf("its evals pass: %+v", r)
	}
	if r := run(t, cli.Options{}, "init", "--cwd", dir); r.code != cli.ExitFailure {
		t.Errorf("init refuses an existing project: %+v", r)
	}
}

func TestProviderCommands(t *testing.T) {
	dir := project(t, basic(nil))
	r := run(t, cli.Options{LookupEnv: func(k string) (string, bool) { return "sk", k == "OPENAI_API_KEY" }}, "provider", "list", "--cwd", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "openai") || !strings.Contains(r.stdout, "replay") {
		t.Errorf("list: %+v", r)
	}
	if r := run(t, cli.Options{}, "provider", "add", "anthropic", "--cwd", dir); r.code != 0 || !strings.Contains(r.stdout, "ANTHROPIC_API_KEY") {
		t.Errorf("add: %+v", r)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "bread.yaml"))
	if !strings.Contains(string(b), "providers: [replay, anthropic]") {
		t.Errorf("bread.yaml keeps the providers in use:\n%s", b)
	}
	if r := run(t, cli.Options{}, "invoke", "echo", "hi", "--cwd", dir); r.code != 0 {
		t.Errorf("the project still runs: %+v", r)
	}
	if r := run(t, cli.Options{}, "provider", "add", "openia", "--cwd", dir); r.code != cli.ExitFailure || !strings.Contains(r.stderr, "UNKNOWN_PROVIDER") {
		t.Errorf("unknown provider: %+v", r)
	}
}

func TestGoExtensions(t *testing.T) {
	dir := project(t, basic(map[string]string{
		"agents/echo/agent.yaml": "model: {provider: replay, model: t/echo.jsonl}\noutput: {format: shout}\n",
		"t/echo.jsonl":           transcript(`raw:{"call":N,"type":"tool-call","toolCallId":"c1","toolName":"tool_double","input":{"n":21}}`, "hello"),
	}))
	double := typed.DefineTool("double", "doubles", func(_ context.Context, a struct {
		N int `json:"n"`
	}, _ core.ToolContext) (int, error) {
		return a.N * 2, nil
	})
	opts := cli.Options{
		Tools:         map[string][]core.Tool{"echo": {double}},
		OutputFormats: map[string]func(string) (any, error){"shout": func(s string) (any, error) { return strings.ToUpper(s) + "!", nil }},
	}
	r := run(t, opts, "invoke", "echo", "hi", "--json", "--trace", "--cwd", dir)
	if r.code != 0 || r.stdout != "\"HELLO!\"\n" || !strings.Contains(r.stderr, "42") {
		t.Errorf("compiled tool and custom format: %+v", r)
	}
}

func TestRecordThenReplay(t *testing.T) {
	dir := project(t, basic(nil))
	rec := filepath.Join(dir, "t", "recorded.jsonl")
	if r := run(t, cli.Options{}, "invoke", "echo", "hi", "--record", rec, "--cwd", dir); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	if err := os.WriteFile(filepath.Join(dir, "agents/echo/agent.yaml"), []byte("model: {provider: replay, model: t/recorded.jsonl}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, cli.Options{}, "invoke", "echo", "hi", "--cwd", dir); r.code != 0 || r.stdout != "Hello there.\n" {
		t.Errorf("the recording replays: %+v", r)
	}
}

func TestUsage(t *testing.T) {
	if r := run(t, cli.Options{}); r.code != cli.ExitUsage || !strings.Contains(r.stderr, "usage: bread") {
		t.Errorf("%+v", r)
	}
	if r := run(t, cli.Options{}, "bake"); r.code != cli.ExitUsage || !strings.Contains(r.stderr, `unknown command "bake"`) {
		t.Errorf("%+v", r)
	}
}

func TestBuildChecksComponentTypes(t *testing.T) {
	dir := project(t, basic(map[string]string{
		"bread.yaml": "entrypoints: [echo]\nstore: {type: bogus}\ntransport: {type: carrier-pigeon}\n",
	}))
	r := run(t, cli.Options{}, "build", "--cwd", dir)
	for _, want := range []string{`unknown store "bogus"`, `unknown transport "carrier-pigeon"`, "bread.yaml:2", "bread.yaml:3"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("build output lacks %q:\n%s", want, r.stderr)
		}
	}
	if r.code != cli.ExitFailure {
		t.Errorf("exit %d, want %d", r.code, cli.ExitFailure)
	}
}

// TestContextStopsAnInProcessServer runs `start` through cli.Main and stops
// it by cancelling Options.Context, the way an embedding program would.
func TestContextStopsAnInProcessServer(t *testing.T) {
	dir := project(t, basic(nil))
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan result, 1)
	go func() {
		var out, errOut syncWriter
		out.w, errOut.w = &bytes.Buffer{}, &bytes.Buffer{}
		code := cli.Main(cli.Options{Context: ctx, Args: []string{"start", "-p", strconv.Itoa(port), "-H", "127.0.0.1", "--cwd", dir},
			Stdout: &out, Stderr: &errOut, LookupEnv: func(string) (string, bool) { return "", false }})
		done <- result{code, out.String(), errOut.String()}
	}()
	waitHTTP(t, "http://127.0.0.1:"+strconv.Itoa(port)+"/agents")
	cancel()
	select {
	case r := <-done:
		if r.code != cli.ExitOK {
			t.Fatalf("start exited %d: %s", r.code, r.stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("start ignored its cancelled context")
	}
}

// TestPostgresURLFromLookupEnv: a postgres store without url reads
// DATABASE_URL through Options.LookupEnv, not the process environment.
func TestPostgresURLFromLookupEnv(t *testing.T) {
	dir := project(t, basic(map[string]string{
		"bread.yaml": "entrypoints: [echo]\nstore: postgres\n",
	}))
	env := func(k string) (string, bool) {
		if k == "DATABASE_URL" {
			return "postgres://nobody@127.0.0.1:1/none?connect_timeout=1", true
		}
		return "", false
	}
	r := run(t, cli.Options{LookupEnv: env}, "invoke", "echo", "hi", "--cwd", dir)
	if r.code != cli.ExitFailure || strings.Contains(r.stderr, "no connection string") || !strings.Contains(r.stderr, "127.0.0.1") {
		t.Errorf("the store should have tried the URL from LookupEnv: code %d, stderr %q", r.code, r.stderr)
	}
}
