package examplestest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/breadai/bread/stores/teststores"
)

// clientsDir holds the Node scripts that drive the protocols' official
// client libraries, pinned by its package.json and package-lock.json.
const clientsDir = "testdata/clients"

// officialClients returns the path of node once the pinned packages are
// installed (npm ci in testdata/clients; .ci/run does it). Without node or
// the packages the test skips and says how to get them, or fails under
// BREAD_TEST_REQUIRE=1.
func officialClients(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	missing := ""
	switch {
	case err != nil:
		missing = "node is not on the PATH (Debian: apt-get install nodejs npm)"
	default:
		if _, err := os.Stat(filepath.Join(clientsDir, "node_modules", "@ag-ui", "client")); err != nil {
			missing = "the official clients are not installed: run npm ci in examples/examples_test/" + clientsDir
		}
	}
	if missing != "" {
		if os.Getenv("BREAD_TEST_REQUIRE") == "1" {
			t.Fatal(missing + ", and BREAD_TEST_REQUIRE=1 forbids skipping")
		}
		t.Skip(missing)
	}
	return node
}

// runNode runs one client script with args and env (plus PATH, HOME and
// TMPDIR), failing the test with its output unless it exits 0.
func runNode(t *testing.T, node, script string, env map[string]string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = clientsDir
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "GORACE"} {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, out)
	}
	t.Logf("node %s:\n%s", script, out)
}

var storeLine = regexp.MustCompile(`(?m)^store: .*$`)

// onStore copies an example and points its bread.yaml at the store: the
// example's own SQLite file, or a fresh PostgreSQL schema.
func onStore(t *testing.T, example, store string) string {
	t.Helper()
	dir := copyExample(t, example)
	if store == "sqlite" {
		return dir
	}
	path := filepath.Join(dir, "bread.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !storeLine.Match(data) {
		t.Fatalf("%s/bread.yaml has no store: line", example)
	}
	line := "store: {type: postgres, url: " + strconv.Quote(teststores.PostgresURL(t)) + "}"
	if err := os.WriteFile(path, storeLine.ReplaceAll(data, []byte(line)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestOfficialClients drives the examples, served by the built bread
// binary on SQLite and on PostgreSQL, with the protocols' own client
// libraries at the versions package-lock.json pins: @ag-ui/client's
// HttpAgent, @a2a-js/sdk on A2A v0.3 and v1.0, and the MCP TypeScript SDK
// over Streamable HTTP and stdio. It also checks every AG-UI golden event
// of protocols/agui against @ag-ui/core's schemas.
func TestOfficialClients(t *testing.T) {
	t.Parallel()
	node := officialClients(t)

	t.Run("AG-UI goldens against @ag-ui/core", func(t *testing.T) {
		goldens, err := filepath.Glob(filepath.Join(examplesDir(t), "..", "protocols", "agui", "testdata", "*.golden"))
		if err != nil || len(goldens) == 0 {
			t.Fatalf("no AG-UI goldens: %v", err)
		}
		runNode(t, node, "agui-schema.mjs", nil, goldens...)
	})

	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			t.Run("AG-UI HttpAgent", func(t *testing.T) {
				dir := onStore(t, "ag-ui", store)
				srv := startServer(t, dir, nil)
				answer := transcriptText(t, filepath.Join(dir, "transcripts/planner.jsonl"), 1)
				runNode(t, node, "agui.mjs", nil, srv.URL+"/ag-ui/run", answer)
			})
			t.Run("AG-UI HttpAgent frontend tool and state", func(t *testing.T) {
				dir := onStore(t, "ag-ui", store)
				srv := startServer(t, dir, nil)
				answer := transcriptText(t, filepath.Join(dir, "transcripts/shopper.jsonl"), 2)
				runNode(t, node, "agui-tools.mjs", nil, srv.URL+"/ag-ui/shop", answer)
			})
			t.Run("A2A JS SDK", func(t *testing.T) {
				dir := onStore(t, "a2a/server", store)
				srv := startServer(t, dir, nil)
				answer := transcriptText(t, filepath.Join(dir, "transcripts/baker.jsonl"), 0)
				runNode(t, node, "a2a.mjs", nil, srv.URL, "/.well-known/agent-card.json", "/.well-known/editor-card.json", "0.3", answer)
				runNode(t, node, "a2a.mjs", nil, srv.URL, "/.well-known/agent-card-v1.json", "/.well-known/editor-card-v1.json", "1.0", answer)
			})
			t.Run("MCP TypeScript SDK", func(t *testing.T) {
				env := map[string]string{"BAKERY_MCP_BIN": bakeryBinary(t)}
				dir := onStore(t, "mcp", store)
				answer := transcriptText(t, filepath.Join(dir, "transcripts/baker.jsonl"), 1)
				srv := startServer(t, dir, env)
				runNode(t, node, "mcp.mjs", nil, "http", srv.URL+"/mcp", answer)
				runNode(t, node, "mcp.mjs", env, "stdio", answer, "--", breadBinary(t), "--cwd", dir, "mcp")
			})
			t.Run("MCP elicitation", func(t *testing.T) {
				dir := onStore(t, "mcp-approval", store)
				answer := transcriptText(t, filepath.Join(dir, "transcripts/publisher.jsonl"), 1)
				srv := startServer(t, dir, nil)
				runNode(t, node, "mcp-elicitation.mjs", nil, srv.URL+"/mcp", "accept", answer)
				runNode(t, node, "mcp-elicitation.mjs", nil, srv.URL+"/mcp", "decline", answer)
			})
		})
	}
}
