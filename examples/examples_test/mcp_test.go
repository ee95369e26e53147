package examplestest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

var bakery struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// bakeryBinary builds the example's MCP server (examples/mcp/bakery) once.
func bakeryBinary(t *testing.T) string {
	t.Helper()
	bakery.once.Do(func() {
		bakery.path = filepath.Join(tmpRoot, "bakery")
		bakery.out, bakery.err = exec.Command("go", "build", "-o", bakery.path, "github.com/breadai/bread/examples/mcp/bakery").CombinedOutput()
	})
	if bakery.err != nil {
		t.Fatalf("go build bakery: %v\n%s", bakery.err, bakery.out)
	}
	return bakery.path
}

func TestMCP(t *testing.T) {
	t.Parallel()
	dir := copyExample(t, "mcp")
	env := map[string]string{"BAKERY_MCP_BIN": bakeryBinary(t)}
	answer := transcriptText(t, filepath.Join(dir, "transcripts/baker.jsonl"), 1)
	const question = "How do I make focaccia?"

	t.Run("the agent calls the bakery MCP server", func(t *testing.T) {
		r := mustBread(t, invocation{dir: dir, env: env, args: []string{"invoke", "baker", "--trace", question}})
		if !strings.Contains(r.stdout, answer) {
			t.Errorf("stdout %q lacks %q", r.stdout, answer)
		}
		for _, want := range []string{"plugin_mcp_client_bakery__get_recipe", `"flourGrams":500`} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("the trace lacks %s:\n%s", want, r.stderr)
			}
		}
	})

	call := func(t *testing.T, cs *mcp.ClientSession) {
		t.Helper()
		lt, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(lt.Tools) != 1 || lt.Tools[0].Name != "baker" {
			t.Fatalf("tools %+v", lt.Tools)
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "baker", Arguments: map[string]any{"input": question}})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := res.StructuredContent.(map[string]any)
		if res.IsError || out == nil || !strings.Contains(out["output"].(string), answer) {
			t.Fatalf("result %+v", res)
		}
	}

	t.Run("served at /mcp", func(t *testing.T) {
		srv := startServer(t, copyExample(t, "mcp"), env)
		client := mcp.NewClient(&mcp.Implementation{Name: "examples-test", Version: "1"}, nil)
		cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		call(t, cs)
	})

	t.Run("the bakery asks a human through elicitation", func(t *testing.T) {
		srv := startServer(t, copyExample(t, "mcp"), env)
		crumbs := stream(t, srv.URL+"/agents/orderer/run", `{"input":"order focaccia"}`, nil)
		humans := crumbsOf[*core.HumanRequired](crumbs)
		if len(humans) != 1 || humans[0].Kind != core.HumanInput || humans[0].Prompt != "How many loaves of focaccia?" ||
			!strings.Contains(text(humans[0].Schema), `"loaves"`) {
			t.Fatalf("want the bakery's question as human:required, got %s", crumbTypes(crumbs))
		}
		crumbs = stream(t, srv.URL+"/resume/"+humans[0].CheckpointID, `{"response":{"loaves":3}}`, nil)
		results := crumbsOf[*core.ToolResult](crumbs)
		if len(results) != 1 || text(results[0].Result) != "ordered 3 loaves of focaccia" {
			t.Fatalf("want the bakery's result after the answer, got %s", crumbTypes(crumbs))
		}
		if out := text(runEnd(t, crumbs, "orderer").Output); out != "Your focaccia order is in." {
			t.Errorf("output %q", out)
		}
	})

	t.Run("bread mcp over stdio", func(t *testing.T) {
		cmd := exec.Command(breadBinary(t), "--cwd", copyExample(t, "mcp"), "mcp")
		for _, k := range []string{"PATH", "HOME", "TMPDIR", "GORACE"} {
			if v, ok := os.LookupEnv(k); ok {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
		}
		cmd.Env = append(cmd.Env, "BAKERY_MCP_BIN="+env["BAKERY_MCP_BIN"])
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		client := mcp.NewClient(&mcp.Implementation{Name: "examples-test", Version: "1"}, nil)
		cs, err := client.Connect(context.WithoutCancel(t.Context()), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		call(t, cs)
		if err := cs.Close(); err != nil {
			t.Logf("close: %v", err)
		}
	})
}
