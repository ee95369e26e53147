package server_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// forbiddenDeps are the modules a server user must never compile: the
// engine, and what only the engine and the project loader need.
var forbiddenDeps = []string{
	"github.com/breadai/bread/engine",
	"github.com/robfig/cron",
	"github.com/goccy/go-yaml",
	"go.yaml.in/yaml",
	"gopkg.in/yaml",
}

// TestServerDoesNotDependOnTheEngine keeps DESIGN.md's promise that server
// never imports engine: the server reaches it through server.Engine, and the
// project loader is the CLI's. It asks the go command, outside the
// workspace, for every package the server's packages and their tests
// compile, for the modules the server's go.mod requires, and for its whole
// module graph.
func TestServerDoesNotDependOnTheEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	goCmd := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(gobin, args...)
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	for _, pkg := range strings.Fields(string(goCmd("list", "-deps", "-test", "-f", "{{.ImportPath}}", "./..."))) {
		if dep := forbidden(pkg); dep != "" {
			t.Errorf("the server (or its tests) compiles %s, from %s", pkg, dep)
		}
	}
	var mod struct{ Require []struct{ Path string } }
	if err := json.Unmarshal(goCmd("mod", "edit", "-json"), &mod); err != nil {
		t.Fatal(err)
	}
	for _, r := range mod.Require {
		if forbidden(r.Path) != "" {
			t.Errorf("server's go.mod requires %s", r.Path)
		}
	}
	// The module graph too: a sibling the server requires (httpstream)
	// whose tests imported the engine put it back in every server user's
	// graph, though no server package compiled it.
	for _, edge := range strings.Split(strings.TrimSpace(string(goCmd("mod", "graph"))), "\n") {
		from, to, _ := strings.Cut(edge, " ")
		if dep := forbidden(strings.Split(to, "@")[0]); dep != "" {
			t.Errorf("the server's module graph lists %s (required by %s)", to, from)
		}
	}
}

// forbidden returns the entry of forbiddenDeps that path is in, or "".
func forbidden(path string) string {
	for _, dep := range forbiddenDeps {
		if path == dep || strings.HasPrefix(path, dep+"/") {
			return dep
		}
	}
	return ""
}
