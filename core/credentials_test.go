package core_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
)

// vaultServer speaks Vault's KV v2 read API for a fixed set of secrets.
func vaultServer(t *testing.T, token string, secrets map[string]string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Vault-Token") != token {
			http.Error(w, `{"errors":["permission denied"]}`, http.StatusForbidden)
			return
		}
		const prefix = "/v1/kv/data/"
		if !strings.HasPrefix(r.URL.Path, prefix) {
			http.Error(w, `{"errors":[]}`, http.StatusNotFound)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, prefix)
		v, ok := secrets[name]
		if !ok {
			http.Error(w, `{"errors":[]}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"request_id":"x","lease_duration":0,"data":{"data":{"` + name + `":"` + v + `"},"metadata":{"version":3}}}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestVaultCredentials(t *testing.T) {
	srv := vaultServer(t, "s.root", map[string]string{"SEARCH_API_KEY": "k-123"})
	v, err := core.VaultCredentials(core.VaultOptions{Address: srv.URL, Token: "s.root", Mount: "kv"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.Get(context.Background(), "SEARCH_API_KEY")
	if err != nil || got != "k-123" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	for _, tt := range []struct{ name, code string }{
		{"MISSING", core.CodeCredentialUnavailable},
		{"../other/x", core.CodeInvalidCredentialName},
		{"a?b", core.CodeInvalidCredentialName},
		{"with space", core.CodeInvalidCredentialName},
		{"1abc", core.CodeInvalidCredentialName},
	} {
		_, err := v.Get(context.Background(), tt.name)
		wantCode(t, err, tt.code)
	}
	bad, _ := core.VaultCredentials(core.VaultOptions{Address: srv.URL, Token: "wrong", Mount: "kv"})
	_, err = bad.Get(context.Background(), "SEARCH_API_KEY")
	wantCode(t, err, core.CodeCredentialUnavailable)
	if strings.Contains(err.Error(), "wrong") {
		t.Errorf("the token leaked into an error: %v", err)
	}
	for _, mount := range []string{"a/b", "..", "x y", "%2e"} {
		_, err := core.VaultCredentials(core.VaultOptions{Address: srv.URL, Mount: mount})
		wantCode(t, err, core.CodeInvalidVaultMount)
	}
	_, err = core.VaultCredentials(core.VaultOptions{Address: "not a url"})
	wantCode(t, err, core.CodeInvalidConfig)
}

func TestToolCredentials(t *testing.T) {
	t.Setenv("BREAD_TEST_SECRET", "from-env")
	read := func(name string) core.Tool {
		tool := core.DefineTool("reader", "", func(ctx context.Context, _ struct{}, tc core.ToolContext) (string, error) {
			return tc.Credentials.Get(ctx, name)
		})
		tool.Credentials = []string{"BREAD_TEST_SECRET"}
		return tool
	}
	vault := vaultServer(t, "tok", map[string]string{"BREAD_TEST_SECRET": "from-vault"})
	vp, _ := core.VaultCredentials(core.VaultOptions{Address: vault.URL, Token: "tok", Mount: "kv"})
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
			tb := newTestbed(t, modeltest.New(modeltest.ToolCall("tool_reader", struct{}{}), modeltest.Text("ok")), []*core.Agent{a}, func(c *core.Config) { c.Credentials = tt.global })
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

func TestEnvCredentialsMissing(t *testing.T) {
	_, err := core.EnvCredentials().Get(context.Background(), "BREAD_TEST_DEFINITELY_UNSET")
	var be *core.BreadError
	if !errors.As(err, &be) || be.Code != core.CodeCredentialUnavailable {
		t.Fatalf("got %v", err)
	}
}
