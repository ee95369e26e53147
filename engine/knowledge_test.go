package engine_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
)

func toolNames(req core.ModelRequest) []string {
	var out []string
	for _, s := range req.Tools {
		out = append(out, s.Name)
	}
	return out
}

func TestKnowledgeTools(t *testing.T) {
	a := &core.Agent{ID: "mem", Model: mockModel(), Knowledge: &core.KnowledgeConfig{AutoInject: true, MaxTokens: 20}}
	tb := newTestbed(t, modeltest.New(
		modeltest.ToolCall("core_kg_store", map[string]any{"label": "Ada Lovelace", "data": map[string]any{"born": 1815}}),
		modeltest.ToolCall("core_kg_query", map[string]any{"query": "ada"}),
		modeltest.Text("noted"),
		modeltest.Text("second run"),
	), []*core.Agent{a})
	opts := core.RunOptions{Session: core.SessionOptions{ID: "s1"}}
	cs, err := tb.run(t, "mem", "remember Ada", opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(tb.model.Requests()[0]); !slices.Equal(got, []string{"core_kg_forget", "core_kg_query", "core_kg_store"}) {
		t.Errorf("tools %v", got)
	}
	results := find[*core.ToolResult](cs)
	if len(results) != 2 || !strings.Contains(asJSONString(results[1].Result), "Ada Lovelace") {
		t.Errorf("results %s", asJSONString(results))
	}
	if _, err := tb.run(t, "mem", "again", opts); err != nil {
		t.Fatal(err)
	}
	sys := tb.model.Requests()[3].System
	if !strings.HasPrefix(sys, "## Knowledge Graph Context") || len(sys) > 80 {
		t.Errorf("auto-injected context, bounded by maxTokens: %q", sys)
	}
}

func TestDocumentTools(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.md"), []byte("sourdough needs time"), 0o600); err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("rye from the web")) }))
	defer web.Close()
	// The test server is on loopback: this agent opts in to its host and
	// to private networks.
	a := &core.Agent{ID: "docs", Model: mockModel(), Documents: &core.DocumentConfig{Root: root, AllowHosts: []string{"127.0.0.1"}, AllowPrivateNetworks: true}}
	tb := newTestbed(t, modeltest.New(
		modeltest.ToolCalls(
			modeltest.Call{ID: "1", Name: "core_doc_load", Args: map[string]string{"source": "notes.md"}},
			modeltest.Call{ID: "2", Name: "core_doc_load", Args: map[string]string{"source": web.URL}},
			modeltest.Call{ID: "3", Name: "core_doc_load", Args: map[string]string{"source": "../../etc/passwd"}},
			modeltest.Call{ID: "4", Name: "core_doc_load", Args: map[string]string{"source": "/etc/passwd"}},
		),
		modeltest.ToolCall("core_doc_search", map[string]string{"query": "RYE"}),
		modeltest.Text("ok"),
	), []*core.Agent{a})
	cs, err := tb.run(t, "docs", "x", core.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(tb.model.Requests()[0]); !slices.Equal(got, []string{"core_doc_ingest", "core_doc_load", "core_doc_read", "core_doc_search"}) {
		t.Errorf("tools %v", got)
	}
	errs := find[*core.ToolError](cs)
	if len(errs) != 2 || errs[0].Error.Code != core.CodeValidationError {
		t.Errorf("paths outside the root are refused: %+v", errs)
	}
	search := find[*core.ToolResult](cs)
	if got := asJSONString(search[len(search)-1].Result); !strings.Contains(got, web.URL) {
		t.Errorf("search found %s", got)
	}
}

// TestDocumentURLsAreOptIn: the model picks what core_doc_load fetches, so
// URLs are refused unless the agent names the hosts, and even then the
// machine's own network (loopback, private, link-local: the cloud metadata
// service) stays out of reach unless the agent says otherwise.
func TestDocumentURLsAreOptIn(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("internal")) }))
	defer web.Close()
	_, port, _ := net.SplitHostPort(web.Listener.Addr().String())
	tests := []struct {
		name   string
		cfg    core.DocumentConfig
		source string
		want   string // substring of the tool error; "" means it loads
	}{
		{"no hosts allowed", core.DocumentConfig{}, web.URL, "allow no hosts"},
		{"host not in the list", core.DocumentConfig{AllowHosts: []string{"docs.example.com"}}, web.URL, "not in documents.allowHosts"},
		{"allowed host on loopback", core.DocumentConfig{AllowHosts: []string{"127.0.0.1"}}, web.URL, "loopback, private or link-local"},
		{"a name that resolves to loopback", core.DocumentConfig{AllowHosts: []string{"localhost"}}, "http://localhost:" + port, "loopback, private or link-local"},
		{"the metadata service", core.DocumentConfig{AllowHosts: []string{"*"}}, "http://169.254.169.254/latest/meta-data/", "loopback, private or link-local"},
		{"another scheme", core.DocumentConfig{AllowHosts: []string{"*"}}, "file:///etc/passwd", "file paths are not allowed"},
		{"opted in to private networks", core.DocumentConfig{AllowHosts: []string{"127.0.0.1"}, AllowPrivateNetworks: true}, web.URL, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			a := &core.Agent{ID: "docs", Model: mockModel(), Documents: &cfg}
			tb := newTestbed(t, modeltest.New(modeltest.ToolCall("core_doc_load", map[string]string{"source": tt.source}), modeltest.Text("ok")), []*core.Agent{a})
			cs, err := tb.run(t, "docs", "x", core.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			errs := find[*core.ToolError](cs)
			if tt.want == "" {
				if len(errs) != 0 {
					t.Fatalf("refused: %+v", errs[0].Error)
				}
				return
			}
			if len(errs) != 1 || errs[0].Error.Code != core.CodeValidationError || !strings.Contains(errs[0].Error.Message, tt.want) {
				t.Fatalf("tool errors %+v, want one VALIDATION_ERROR saying %q", errs, tt.want)
			}
		})
	}
}

func TestDocumentsWithoutARootRefuseFiles(t *testing.T) {
	a := &core.Agent{ID: "docs", Model: mockModel(), Documents: &core.DocumentConfig{}}
	tb := newTestbed(t, modeltest.New(modeltest.ToolCall("core_doc_load", map[string]string{"source": "go.mod"}), modeltest.Text("ok")), []*core.Agent{a})
	cs, _ := tb.run(t, "docs", "x", core.RunOptions{})
	if te := last[*core.ToolError](t, cs); !strings.Contains(te.Error.Message, "not allowed") {
		t.Errorf("got %+v", te.Error)
	}
	_ = context.Background
}
