package cli_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/breadai/bread/cli"
)

// TestBuildRefusesAMisspelledPermission: examples/hitl-approval with its
// gate misspelled ("tool:publsh") used to build and then run the publish
// tool without asking anyone. bread build now fails, naming the file and
// line.
func TestBuildRefusesAMisspelledPermission(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../examples/hitl-approval")); err != nil {
		t.Fatal(err)
	}
	if r := run(t, cli.Options{}, "build", "--cwd", dir); r.code != 0 {
		t.Fatalf("the example as shipped: %+v", r)
	}
	path := filepath.Join(dir, "agents/publisher/agent.yaml")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	typo := strings.Replace(string(src), `"tool:publish"`, `"tool:publsh"`, 1)
	if typo == string(src) {
		t.Fatal("the example no longer gates tool:publish")
	}
	if err := os.WriteFile(path, []byte(typo), 0o644); err != nil {
		t.Fatal(err)
	}
	line := 1 + strings.Count(typo[:strings.Index(typo, "tool:publsh")], "\n")
	r := run(t, cli.Options{}, "build", "--cwd", dir)
	want := "agents/publisher/agent.yaml:" + strconv.Itoa(line) + ": INVALID_PERMISSION"
	if r.code == 0 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "publish") {
		t.Fatalf("build of the misspelled gate: code %d, stderr %q; want %q naming the real tool", r.code, r.stderr, want)
	}
}
