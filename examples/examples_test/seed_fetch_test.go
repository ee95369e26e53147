package examplestest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nodeOnly returns the path of node, for scripts that need no package.
// Without node the test skips and says how to get it, or fails under
// BREAD_TEST_REQUIRE=1.
func nodeOnly(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		const missing = "node is not on the PATH (Debian: apt-get install nodejs)"
		if os.Getenv("BREAD_TEST_REQUIRE") == "1" {
			t.Fatal(missing + ", and BREAD_TEST_REQUIRE=1 forbids skipping")
		}
		t.Skip(missing)
	}
	return node
}

// TestSeedFetchExampleReadsAnSSEProject: the seed's own fetch example,
// which sends no Accept of its own (fetch's */*) and keeps the blank-line
// separated blocks that start with "data: ", reads a run of a project
// whose bread.yaml says transport: httpsse, served by the built binary: the
// wire follows the configured transport, and every event's data comes
// before its id. An unknown agent is the seed's error event in a 200
// stream, which the same loop reads.
func TestSeedFetchExampleReadsAnSSEProject(t *testing.T) {
	t.Parallel()
	node := nodeOnly(t)
	dir := copyExample(t, "hello-world")
	path := filepath.Join(dir, "bread.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, "transport: httpsse\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	answer := transcriptText(t, filepath.Join(dir, "transcripts/echo.jsonl"), 0)
	srv := startServer(t, dir, nil)
	script, err := filepath.Abs("testdata/seed/sse-fetch.mjs")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, agent, input string
		code               int
		stdout, stderr     string
	}{
		{"a run's text", "echo", `"hi"`, 0, answer, ""},
		{"an unknown agent", "nope", `"hi"`, 2, "", "AGENT_NOT_FOUND: "},
		{"an invalid input", "echo", `{"topic":"bread"}`, 2, "", "VALIDATION_ERROR: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, script, srv.URL+"/agents/"+c.agent+"/run", c.input)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.code || stdout.String() != c.stdout || !strings.HasPrefix(stderr.String(), c.stderr) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d, %q, %q…", code, stdout.String(), stderr.String(), c.code, c.stdout, c.stderr)
			}
		})
	}
}
