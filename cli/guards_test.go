package cli_test

import (
	"context"
	"strings"
	"testing"

	"github.com/breadai/bread/cli"
)

// guardProject is a valid one-agent project (agent a on a replay model, a
// memory store) with files changed or added by extra ("-" removes one).
func guardProject(extra map[string]string) map[string]string {
	files := map[string]string{
		"bread.yaml":                  "entrypoints: [a]\nstore: memory\n",
		"agents/a/agent.yaml":         "model: {provider: replay, model: t/a.jsonl}\ninputSchema: {type: string}\noutputSchema: {type: string}\n",
		"agents/a/prompt.md":          "You are a.",
		"agents/a/tools/publish.yaml": "command: echo '\"ok\"'\n",
		"t/a.jsonl":                   transcript("done"),
	}
	for k, v := range extra {
		files[k] = v
		if v == "-" {
			delete(files, k)
		}
	}
	return files
}

const schemas = "inputSchema: {type: string}\noutputSchema: {type: string}\n"

// TestBuildAndStartRefuseTheSameConfigs: `bread build` and `bread start`
// refuse each of these projects with the same error at the same file and
// line (issue 29: start served an unknown provider, build failed a
// missing outputSchema start accepted, and selector, plugin and loop errors
// had no line). Both run the same checks (checkProject, then the engine's,
// located by the project).
func TestBuildAndStartRefuseTheSameConfigs(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"a glob selector matching no tool", map[string]string{
			"agents/a/agent.yaml": "model: {provider: replay, model: t/a.jsonl}\n" + schemas + "permissions:\n  ask: [\"tool:pubx*\"]\n",
		}, `agents/a/agent.yaml:5: INVALID_PERMISSION: agent a: permissions.ask selector "tool:pubx*" matches no tool tool of this agent; known: tool:publish`},
		{"a plugin selector naming no plugin", map[string]string{
			"agents/a/agent.yaml": "model: {provider: replay, model: t/a.jsonl}\n" + schemas + "permissions:\n  deny:\n    - tool:publish\n    - plugin:ghost/*\n",
		}, "agents/a/agent.yaml:7: INVALID_PERMISSION: agent a: permissions.deny selector \"plugin:ghost/*\" matches no configured plugin"},
		{"an unknown provider", map[string]string{
			"agents/a/agent.yaml": schemas + "model:\n  provider: nowhere\n  model: m\n",
		}, `agents/a/agent.yaml:4: UNKNOWN_PROVIDER: Agent "a" uses unknown provider "nowhere"`},
		{"a loop with no iterations", map[string]string{
			"agents/a/agent.yaml": "model: {provider: replay, model: t/a.jsonl}\n" + schemas + "loop:\n  pool: [b]\n  maxIterations: 0\n",
			"agents/b/agent.yaml": "model: {provider: replay, model: t/a.jsonl}\n",
		}, "agents/a/agent.yaml:6: INVALID_CONFIG: agent a: a loop needs maxIterations >= 1"},
		{"a loop naming an unknown agent", map[string]string{
			"agents/a/agent.yaml": "model: {provider: replay, model: t/a.jsonl}\n" + schemas + "loop:\n  maxIterations: 2\n  pool:\n    - a_helper\n",
		}, `agents/a/agent.yaml:7: INVALID_CONFIG: loop of a names unknown agent "a_helper"`},
		{"supervisors delegating to each other", map[string]string{
			"agents/a/agent.yaml": "model: {provider: replay, model: t/a.jsonl}\n" + schemas + "supervisor:\n  agents:\n    - agentId: b\n",
			"agents/b/agent.yaml": "model: {provider: replay, model: t/a.jsonl}\nsupervisor:\n  agents:\n    - {agentId: c}\n    - {agentId: a}\n",
			"agents/c/agent.yaml": "model: {provider: replay, model: t/a.jsonl}\n",
		}, "agents/b/agent.yaml:5: INVALID_CONFIG: delegation cycle a → b → a"},
		{"an agent looping over itself", map[string]string{
			"agents/a/agent.yaml": "model: {provider: replay, model: t/a.jsonl}\n" + schemas + "loop:\n  maxIterations: 2\n  pool: [a]\n",
		}, "agents/a/agent.yaml:6: INVALID_CONFIG: delegation cycle a → a"},
		{"a delegation depth of zero", map[string]string{
			"bread.yaml": "entrypoints: [a]\nstore: memory\ndelegation:\n  maxDepth: 0\n",
		}, "bread.yaml:4: INVALID_CONFIG: delegation.maxDepth 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := project(t, guardProject(tt.files))
			build := run(t, cli.Options{}, "build", "--cwd", dir)
			if build.code != cli.ExitFailure || !strings.Contains(build.stderr, tt.want) {
				t.Errorf("build: code %d, stderr:\n%s\nwant %q", build.code, build.stderr, tt.want)
			}
			// A cancelled context: were the project served, start would
			// drain at once instead of serving for ever.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			start := run(t, cli.Options{Context: ctx}, "start", "-H", "127.0.0.1", "-p", "1", "--cwd", dir)
			if start.code != cli.ExitFailure || !strings.Contains(start.stderr, tt.want) {
				t.Errorf("start: code %d, stderr:\n%s\nwant %q", start.code, start.stderr, tt.want)
			}
		})
	}
}

// TestBuildAndStartAcceptTheSameConfigs: what both accept, and say.
// A missing prompt.md, inputSchema or outputSchema is accepted (the agent
// runs with no system prompt, its input unchecked, its output as is) with
// a warning; a delegation cycle is a warning when bread.yaml sets
// delegation.maxDepth on purpose.
func TestBuildAndStartAcceptTheSameConfigs(t *testing.T) {
	dir := project(t, guardProject(map[string]string{
		"bread.yaml":          "entrypoints: [a]\nstore: memory\ndelegation: {maxDepth: 3}\n",
		"agents/a/agent.yaml": "model: {provider: replay, model: t/a.jsonl}\ninputSchema: {type: string}\nloop:\n  maxIterations: 2\n  pool: [a]\n",
		"agents/a/prompt.md":  "-",
	}))
	r := run(t, cli.Options{}, "build", "--cwd", dir)
	if r.code != 0 || !strings.Contains(r.stderr, "warning: agents/a: no prompt.md") || !strings.Contains(r.stderr, `warning: agents/a/agent.yaml: agent "a" has no outputSchema`) ||
		!strings.Contains(r.stderr, "warning: agents/a/agent.yaml:5: INVALID_CONFIG: delegation cycle a → a") || !strings.Contains(r.stderr, "delegation.maxDepth is 3") {
		t.Errorf("build: %+v", r)
	}
}

// TestMutualDelegationEndsAtTheDepthLimit: over the CLI, agents that
// delegate to each other (allowed on purpose with delegation.maxDepth)
// end the run with DELEGATION_DEPTH_EXCEEDED at the limit instead of
// recursing until the client leaves.
func TestMutualDelegationEndsAtTheDepthLimit(t *testing.T) {
	call := func(to string) string {
		return `raw:{"call":N,"type":"tool-call","toolCallId":"d","toolName":"core_delegate","input":{"agentId":"` + to + `","input":"x"}}`
	}
	dir := project(t, map[string]string{
		"bread.yaml":          "entrypoints: [a]\nstore: memory\ndelegation: {maxDepth: 3}\n",
		"agents/a/agent.yaml": "model: {provider: replay, model: t/a.jsonl}\n" + schemas + "supervisor: {agents: [{agentId: b}]}\n",
		"agents/a/prompt.md":  "Delegate.",
		"agents/b/agent.yaml": "model: {provider: replay, model: t/b.jsonl}\n" + schemas + "supervisor: {agents: [{agentId: a}]}\n",
		"agents/b/prompt.md":  "Delegate.",
		"t/a.jsonl":           transcript(call("b")),
		"t/b.jsonl":           transcript(call("a")),
	})
	r := run(t, cli.Options{}, "invoke", "a", "go", "--cwd", dir)
	if r.code != cli.ExitFailure || !strings.Contains(r.stderr, "DELEGATION_DEPTH_EXCEEDED") || !strings.Contains(r.stderr, "a → b → a → b → a") {
		t.Errorf("invoke: %+v", r)
	}
}

// TestInvokeAndChatRefuseWhatBuildRefuses: `bread invoke` and `bread chat`
// run build's and start's project checks (all but the server's wiring and
// auth) before any run: a delegation cycle or an unknown provider is
// refused at its file and line, as build says it, and no model answers.
func TestInvokeAndChatRefuseWhatBuildRefuses(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"supervisors delegating to each other", map[string]string{
			"agents/a/agent.yaml": "model: {provider: replay, model: t/a.jsonl}\n" + schemas + "supervisor:\n  agents:\n    - agentId: b\n",
			"agents/b/agent.yaml": "model: {provider: replay, model: t/a.jsonl}\nsupervisor:\n  agents:\n    - {agentId: c}\n    - {agentId: a}\n",
			"agents/c/agent.yaml": "model: {provider: replay, model: t/a.jsonl}\n",
		}, "agents/b/agent.yaml:5: INVALID_CONFIG: delegation cycle a → b → a"},
		{"an agent looping over itself", map[string]string{
			"agents/a/agent.yaml": "model: {provider: replay, model: t/a.jsonl}\n" + schemas + "loop:\n  maxIterations: 2\n  pool: [a]\n",
		}, "agents/a/agent.yaml:6: INVALID_CONFIG: delegation cycle a → a"},
		{"an unknown provider of another served agent", map[string]string{
			"bread.yaml":          "entrypoints: [a, b]\nstore: memory\n",
			"agents/b/agent.yaml": schemas + "model:\n  provider: nowhere\n  model: m\n",
		}, `agents/b/agent.yaml:4: UNKNOWN_PROVIDER: Agent "b" uses unknown provider "nowhere"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := project(t, guardProject(tt.files))
			for _, args := range [][]string{{"invoke", "a", "go"}, {"chat", "a"}} {
				r := run(t, cli.Options{Stdin: strings.NewReader("go\n/exit\n")}, append(args, "--cwd", dir)...)
				if r.code != cli.ExitFailure || !strings.Contains(r.stderr, tt.want) || strings.Contains(r.stdout, "done") {
					t.Errorf("%s: code %d, stdout %q, stderr:\n%s\nwant %q", args[0], r.code, r.stdout, r.stderr, tt.want)
				}
			}
		})
	}
	// A delegation cycle allowed on purpose (delegation.maxDepth) runs:
	// TestMutualDelegationEndsAtTheDepthLimit.
}
