//lint:file-ignore SA1019 the test client sets log levels as clients still do (deprecated from 2026-07-28 on)

package mcpserver_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/protocols/mcpserver"
)

// Crumbs are logged as notifications/message once the client sets a level,
// filtered by it: nothing before logging/setLevel, the run's course at
// info, the streamed text only at debug.
func TestLoggingFollowsTheLevel(t *testing.T) {
	for _, via := range []string{"2025-11-25", "2026-07-28", "stdio"} {
		t.Run(via, func(t *testing.T) {
			st := newStack(t, setup{model: modeltest.New(modeltest.Text("Bread ", "rises.")), agents: []*core.Agent{echo()}, opts: mcpserver.Options{Agents: []string{"echo"}}})
			var mu sync.Mutex
			var got []string
			opts := &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
				data, _ := r.Params.Data.(map[string]any)
				mu.Lock()
				got = append(got, string(r.Params.Level)+" "+data["type"].(string))
				mu.Unlock()
			}}
			var cs *mcp.ClientSession
			if via == "stdio" {
				cs = stdioSessionOn(t, st.plugin, opts, "2025-11-25")
			} else {
				cs = st.connect(t, via, opts, nil)
			}
			// 2026-07-28 has no logging/setLevel: a request names its level
			// in _meta.
			level := ""
			logged := func() []string {
				mu.Lock()
				defer mu.Unlock()
				out := got
				got = nil
				return out
			}
			call := func() {
				t.Helper()
				params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"input": "x"}}
				if via == "2026-07-28" && level != "" {
					params.Meta = mcp.Meta{"io.modelcontextprotocol/logLevel": level}
				}
				res, err := cs.CallTool(t.Context(), params)
				if err != nil || res.IsError {
					t.Fatalf("%v %+v", err, res)
				}
			}
			call()
			if l := logged(); len(l) != 0 {
				t.Errorf("logged before setLevel: %v", l)
			}
			for _, c := range []struct {
				level string
				want  []string
			}{
				{"info", []string{"info agent:run:start", "info agent:run:end"}},
				{"debug", []string{"info agent:run:start", "debug text:delta", "debug text:delta", "info agent:run:end"}},
			} {
				level = c.level
				if via != "2026-07-28" {
					if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: mcp.LoggingLevel(c.level)}); err != nil {
						t.Fatal(err)
					}
				}
				call()
				// Notifications precede the result on the call's stream,
				// but the client handles them on goroutines of its own.
				eventually(t, "the log messages", func() bool {
					mu.Lock()
					defer mu.Unlock()
					return len(got) >= len(c.want)
				})
				if l := logged(); !slices.Equal(l, c.want) {
					t.Errorf("at %s logged %v, want %v", c.level, l, c.want)
				}
			}
		})
	}
}
