package examplestest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/breadai/bread/providers/replay"
)

// projects are every bread project under examples/.
var projects = []string{
	"hello-world", "hitl-approval", "pipeline", "loop", "researcher-writer",
	"knowledge-graph", "store-showcase", "remote-agent/provider", "remote-agent/consumer", "auth",
	"a2a/server", "a2a/client", "mcp-approval",
}

// projectEnv is the environment every project's build sees: the auth
// example's bread.yaml reads its secrets from it.
var projectEnv = map[string]string{"JWT_SECRET": exampleJWTSecret, "OPS_KEY": exampleOpsKey}

// TestBuild: bread build passes in every project.
func TestBuild(t *testing.T) {
	t.Parallel()
	for _, p := range projects {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			r := mustBread(t, invocation{dir: copyExample(t, p), env: projectEnv, args: []string{"build"}})
			if !strings.Contains(r.stdout, "agent(s) ok") {
				t.Errorf("build: %s", r)
			}
		})
	}
}

// TestEval: bread eval passes offline in every project with evals that
// needs no other server (the consumer's runs in TestRemoteAgent).
func TestEval(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"hello-world", "pipeline", "loop", "researcher-writer", "knowledge-graph", "store-showcase", "remote-agent/provider"} {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			r := mustBread(t, invocation{dir: copyExample(t, p), args: []string{"eval"}})
			if !strings.Contains(r.stderr, "✓") || strings.Contains(r.stderr, "✗") {
				t.Errorf("eval: %s", r)
			}
		})
	}
}

var modelLine = regexp.MustCompile(`(?m)^  provider: \$\{BREAD_PROVIDER:-replay\}\n  model: \$\{BREAD_MODEL:-(transcripts/[a-z_-]+\.jsonl)(?:#sequence|#conversation)?\}$`)

// TestProjectsRunOfflineAndOnline checks the conventions every example
// keeps: a README and a .gitignore for local state, and every agent and
// task on ${BREAD_PROVIDER:-replay} / ${BREAD_MODEL:-transcripts/...} with
// a transcript that parses.
func TestProjectsRunOfflineAndOnline(t *testing.T) {
	t.Parallel()
	root := examplesDir(t)
	for _, p := range projects {
		dir := filepath.Join(root, p)
		ignore, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
		if err != nil || !strings.Contains(string(ignore), "bread.db*") || !strings.Contains(string(ignore), ".bread/") {
			t.Errorf("%s: .gitignore should ignore bread.db* and .bread/ (%v)", p, err)
		}
		readme := dir
		if strings.HasPrefix(p, "remote-agent/") || strings.HasPrefix(p, "a2a/") {
			readme = filepath.Dir(dir)
		}
		if _, err := os.Stat(filepath.Join(readme, "README.md")); err != nil {
			t.Errorf("%s: no README.md", p)
		}
		models, _ := filepath.Glob(filepath.Join(dir, "agents", "*", "agent.yaml"))
		tasks, _ := filepath.Glob(filepath.Join(dir, "tasks", "*.yaml"))
		for _, file := range append(models, tasks...) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			m := modelLine.FindSubmatch(data)
			if m == nil {
				t.Errorf("%s: the model should be ${BREAD_PROVIDER:-replay} / ${BREAD_MODEL:-transcripts/<name>.jsonl}", file)
				continue
			}
			if _, err := replay.Open(filepath.Join(dir, string(m[1])), replay.Options{}); err != nil {
				t.Errorf("%s: %v", file, err)
			}
		}
	}
}
