package engine_test

import (
	"context"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/typed"
)

func TestToolCredentials(t *testing.T) {
	t.Setenv("BREAD_TEST_SECRET", "from-env")
	read := func(name string) core.Tool {
		tool := typed.DefineTool("reader", "", func(ctx context.Context, _ struct{}, tc core.ToolContext) (string, error) {
			return tc.Credentials.Get(ctx, name)
		})
		tool.Credentials = []string{"BREAD_TEST_SECRET"}
		return tool
	}
	vp := core.CredentialFunc(func(context.Context, string) (string, error) { return "from-vault", nil })
	global := core.CredentialFunc(func(context.Context, string) (string, error) { return "from-config", nil })

	tests := []struct {
		name     string
		tool     func() core.Tool
		global   core.CredentialProvider
		want     string
		wantCode string
	}{
		{"env fallback", func() core.Tool { return read("BREAD_TEST_SECRET") }, nil, "from-env", ""},
		{"config default", func() core.Tool { return read("BREAD_TEST_SECRET") }, global, "from-config", ""},
		{"per-tool override beats config", func() core.Tool { t := read("BREAD_TEST_SECRET"); t.CredentialProvider = vp; return t }, global, "from-vault", ""},
		{"undeclared name", func() core.Tool { return read("HOME") }, nil, "", core.CodeCredentialNotDeclared},
		{"nothing declared, nothing granted", func() core.Tool { t := read("BREAD_TEST_SECRET"); t.Credentials = nil; return t }, nil, "", core.CodeCredentialNotDeclared},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &core.Agent{ID: "a", Model: mockModel(), Tools: []core.Tool{tt.tool()}}
			tb := newTestbed(t, modeltest.New(modeltest.ToolCall("tool_reader", struct{}{}), modeltest.Text("ok")), []*core.Agent{a}, func(c *engine.Config) { c.Credentials = tt.global })
			cs, err := tb.run(t, "a", "x", core.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantCode != "" {
				if te := last[*core.ToolError](t, cs); te.Error.Code != tt.wantCode {
					t.Errorf("code %s", te.Error.Code)
				}
				return
			}
			if got := last[*core.ToolResult](t, cs).Result; got != tt.want {
				t.Errorf("got %v, want %s", got, tt.want)
			}
		})
	}
}
