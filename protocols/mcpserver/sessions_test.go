package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/protocols/mcpserver"
	"github.com/breadai/bread/server"
)

// rawPost sends one JSON-RPC message to /mcp.
func (s *stack) rawPost(t *testing.T, ctx context.Context, body string, h map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.srv.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// open initializes a stateful session over raw HTTP and returns its id.
func (s *stack) open(t *testing.T, h map[string]string) string {
	t.Helper()
	resp := s.rawPost(t, t.Context(), initialize, h)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize answered %d, session %q", resp.StatusCode, id)
	}
	h = withHeader(h, "Mcp-Session-Id", id)
	resp = s.rawPost(t, t.Context(), `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
	resp.Body.Close()
	return id
}

func withHeader(h map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for a, b := range h {
		out[a] = b
	}
	return out
}

// event is one SSE event.
type event struct{ id, data string }

func readEvent(t *testing.T, r *bufio.Reader) event {
	t.Helper()
	var e event
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "" && e.data != "":
			return e
		case strings.HasPrefix(line, "id: "):
			e.id = line[4:]
		case strings.HasPrefix(line, "data: "):
			e.data += line[6:]
		}
	}
}

// An initialize opens a stateful session (the 2025-11-25 SDK client gets an
// id); 2026-07-28 stays sessionless. A session answers only to the identity
// that opened it: another one is told it does not exist.
func TestStatefulSessionsAreOwned(t *testing.T) {
	st := newStack(t, setup{agents: []*core.Agent{echo()}, opts: mcpserver.Options{Agents: []string{"echo"}}, auth: &server.Auth{Strategies: []core.BreadAuthStrategy{keyAuth{}},
		Authorize: func(_ context.Context, id *core.AuthIdentity, action string, _ map[string]string) bool {
			return id != nil
		}}})
	good := http.Header{"Authorization": {"Bearer good"}}
	if cs := st.connect(t, "2025-11-25", nil, good); cs.ID() == "" {
		t.Error("a 2025-11-25 client got no session")
	}
	if cs := st.connect(t, "2026-07-28", nil, good); cs.ID() != "" {
		t.Errorf("a 2026-07-28 client got session %q", cs.ID())
	}
	id := st.open(t, map[string]string{"Authorization": "Bearer good"})
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	for _, c := range []struct {
		who  string
		want int
	}{{"Bearer other", http.StatusNotFound}, {"Bearer good", http.StatusOK}} {
		resp := st.rawPost(t, t.Context(), ping, map[string]string{"Authorization": c.who, "Mcp-Session-Id": id})
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s on the session answered %d, want %d", c.who, resp.StatusCode, c.want)
		}
	}
}

// A stateful call's stream is resumable: the client drops the request, the
// run goes on, and a GET with Last-Event-ID replays what it missed, the
// result included.
func TestStatefulStreamResumes(t *testing.T) {
	release := make(chan struct{})
	a := echo()
	a.Tools = []core.Tool{{Name: "wait", Description: "Waits.", Execute: func(ctx context.Context, _ json.RawMessage, _ core.ToolContext) (any, error) {
		select {
		case <-release:
			return "waited", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}}
	model := modeltest.New(modeltest.ToolCall("tool_wait", map[string]any{}), modeltest.Text("resumed fine"))
	st := newStack(t, setup{model: model, agents: []*core.Agent{a}, opts: mcpserver.Options{Agents: []string{"echo"}}})
	id := st.open(t, nil)
	h := map[string]string{"Mcp-Session-Id": id}

	ctx, drop := context.WithCancel(t.Context())
	resp := st.rawPost(t, ctx, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"input":"x"},"_meta":{"progressToken":"p"}}}`, h)
	first := readEvent(t, bufio.NewReader(resp.Body))
	if first.id == "" || !strings.Contains(first.data, "agent:run:start") {
		t.Fatalf("first event %+v", first)
	}
	drop()
	resp.Body.Close()
	close(release)

	// The server may not have seen the drop yet: the stream is then still
	// held (409), and the client tries again, as a real one would.
	var again *http.Response
	eventually(t, "the stream to be resumable", func() bool {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, st.srv.URL+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Last-Event-ID", first.id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusConflict {
			resp.Body.Close()
			return false
		}
		again = resp
		return true
	})
	defer again.Body.Close()
	if again.StatusCode != http.StatusOK {
		t.Fatalf("resume answered %d", again.StatusCode)
	}
	r := bufio.NewReader(again.Body)
	for {
		e := readEvent(t, r)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Result *mcp.CallToolResult
		}
		if err := json.Unmarshal([]byte(e.data), &msg); err != nil {
			t.Fatal(err)
		}
		if string(msg.ID) == "9" {
			if msg.Result == nil || msg.Result.IsError || text(msg.Result) != "resumed fine" {
				t.Fatalf("result %s", e.data)
			}
			return
		}
	}
}

// A session's GET stream ends after StreamLifetime (the client reopens
// it), so an idle stream never holds a draining server open.
func TestGETStreamEnds(t *testing.T) {
	st := newStack(t, setup{agents: []*core.Agent{echo()}, opts: mcpserver.Options{Agents: []string{"echo"}, StreamLifetime: 50 * time.Millisecond}})
	id := st.open(t, nil)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, st.srv.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET answered %d", resp.StatusCode)
	}
	// The read returns when the server ends the stream; the test's own
	// deadline is the only bound.
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatalf("the stream broke instead of ending: %v", err)
	}
}
