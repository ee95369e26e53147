package core_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestCoreIsALeaf keeps the promise adapter authors rely on: the core module
// (every package but tests) depends on the standard library and
// github.com/google/uuid only. It asks the go command, outside the workspace,
// so a stray import anywhere in the module fails here and not in a user's
// go.sum.
func TestCoreIsALeaf(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	cmd := exec.Command(gobin, "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", "./...")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var modules []string
	for _, m := range strings.Fields(string(out)) {
		if !slices.Contains(modules, m) {
			modules = append(modules, m)
		}
	}
	slices.Sort(modules)
	want := []string{"github.com/breadai/bread/core", "github.com/google/uuid"}
	if !slices.Equal(modules, want) {
		t.Errorf("core's packages depend on modules %v, want only %v", modules, want)
	}
}
