package cli_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A project whose mcpserver exposes one agent; reload adds a second.
func mcpProject(t *testing.T) (dir string, reload func()) {
	t.Helper()
	answer := `{"call":0,"type":"text-delta","delta":"baked"}
{"call":0,"type":"finish","finishReason":"stop"}
`
	dir = project(t, map[string]string{
		"bread.yaml":             "store: {type: sqlite, path: ./bread.db}\nplugins:\n  - {type: mcpserver, agents: [echo]}\n",
		"agents/echo/agent.yaml": "model: {provider: replay, model: t/a.jsonl}\n",
		"t/a.jsonl":              answer,
	})
	return dir, func() {
		if err := os.MkdirAll(filepath.Join(dir, "agents", "fresh"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "agents", "fresh", "agent.yaml"), []byte("model: {provider: replay, model: t/a.jsonl}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "bread.yaml"), []byte("store: {type: sqlite, path: ./bread.db}\nplugins:\n  - {type: mcpserver, agents: [echo, fresh]}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// reloadSeen checks, on a client connected before the reload, that
// tools/list_changed arrives and the new agent is listed and runs.
func reloadSeen(t *testing.T, cs *mcp.ClientSession, changed <-chan struct{}, reload func(), logs func() string) {
	t.Helper()
	ctx := t.Context()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) != 1 || lt.Tools[0].Name != "echo" {
		t.Fatalf("tools before the reload: %v %v", err, lt)
	}
	reload()
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatalf("no notifications/tools/list_changed after the reload; logs:\n%s", logs())
	}
	lt, err = cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	if slices.Sort(names); !slices.Equal(names, []string{"echo", "fresh"}) {
		t.Fatalf("tools after the reload %v", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fresh", Arguments: map[string]any{"input": "go"}})
	if err != nil || res.IsError || len(res.Content) == 0 || res.Content[0].(*mcp.TextContent).Text != "baked" {
		t.Fatalf("the new agent's call: %v %+v", err, res)
	}
}

func listChanged() (*mcp.ClientOptions, <-chan struct{}) {
	ch := make(chan struct{}, 4)
	return &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { ch <- struct{}{} }}, ch
}

// bread dev over a real socket: an MCP session opened before an agent is
// added to the project survives the reload, is sent tools/list_changed,
// and lists and calls the new agent.
func TestDevReloadNotifiesMCPClients(t *testing.T) {
	dir, reload := mcpProject(t)
	port := freePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	logs := &syncWriter{w: &bytes.Buffer{}}
	cmd := exec.Command(binary, "dev", "-p", strconv.Itoa(port), "-H", "127.0.0.1", "--cwd", dir)
	cmd.Stderr, cmd.Stdout = logs, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitHTTP(t, base+"/agents")

	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		opts, changed := listChanged()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		if version == "2025-11-25" {
			reloadSeen(t, cs, changed, reload, logs.String)
			cs.Close()
			continue
		}
		// The listener opened after the first reload sees the next one.
		if err := os.WriteFile(filepath.Join(dir, "bread.yaml"), []byte("store: {type: sqlite, path: ./bread.db}\nplugins:\n  - {type: mcpserver, agents: [fresh]}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
		case <-t.Context().Done():
			t.Fatalf("2026-07-28: no tools/list_changed; logs:\n%s", logs.String())
		}
		if lt, err := cs.ListTools(t.Context(), nil); err != nil || len(lt.Tools) != 1 || lt.Tools[0].Name != "fresh" {
			t.Fatalf("2026-07-28: tools after the second reload %v %v", err, lt)
		}
		cs.Close()
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("dev did not stop cleanly: %v\n%s", err, logs.String())
	}
}

// bread mcp --watch: the stdio client a desktop host launched keeps its
// session when the project changes, and is sent tools/list_changed.
func TestMCPWatchNotifiesStdioClient(t *testing.T) {
	dir, reload := mcpProject(t)
	logs := &syncWriter{w: &bytes.Buffer{}}
	cmd := exec.Command(binary, "mcp", "--watch", "--cwd", dir)
	cmd.Stderr = logs
	opts, changed := listChanged()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, logs.String())
	}
	defer cs.Close()
	reloadSeen(t, cs, changed, reload, logs.String)
}
