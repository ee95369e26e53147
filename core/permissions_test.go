package core_test

import (
	"errors"
	"testing"

	"github.com/breadai/bread/core"
)

func TestLeafNameAndPermID(t *testing.T) {
	tests := []struct {
		o          core.ToolOrigin
		leaf, perm string
	}{
		{core.ToolOrigin{Scope: core.ScopeTool, Name: "web_search"}, "tool_web_search", "tool:web_search"},
		{core.ToolOrigin{Scope: core.ScopeSkill, Sub: "deep_research", Name: "cite"}, "skill_deep_research_cite", "skill:deep_research/cite"},
		{core.ToolOrigin{Scope: core.ScopeTask, Name: "doc_extract"}, "task_doc_extract", "task:doc_extract"},
		{core.ToolOrigin{Scope: core.ScopePlugin, Sub: "mcp_client", Name: "fs__read"}, "plugin_mcp_client_fs__read", "plugin:mcp_client/fs__read"},
		{core.ToolOrigin{Scope: core.ScopeCore, Name: "doc_ingest"}, "core_doc_ingest", "core:doc_ingest"},
		{core.ToolOrigin{Scope: core.ScopeHuman, Name: "approve"}, "human_approve", "human:approve"},
	}
	for _, tt := range tests {
		if got := core.LeafName(tt.o); got != tt.leaf {
			t.Errorf("LeafName(%+v) = %s, want %s", tt.o, got, tt.leaf)
		}
		if got := core.PermID(tt.o); got != tt.perm {
			t.Errorf("PermID(%+v) = %s, want %s", tt.o, got, tt.perm)
		}
	}
}

func TestParseSelector(t *testing.T) {
	valid := []string{"tool:web_search", "tool:*", "tool:read_*", "tool:get_*_by_id", "skill:*", "skill:deep_research/*", "plugin:mcp_*/read_*", "core:doc_ingest", "task:*", "plugin:*/*"}
	for _, s := range valid {
		if _, err := core.ParseSelector(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	invalid := []string{"*", "web_search", "mcp:fs/read", "human:approve", "tool:", "tool:a/b", "plugin:mcp_client", "plugin:a/b/c", "tool:Web", "tool:1abc", "skill:x/", "tool:a-b", ""}
	for _, s := range invalid {
		_, err := core.ParseSelector(s)
		wantCode(t, err, core.CodeInvalidPermission)
	}
}

func TestPermissionDecisions(t *testing.T) {
	search := core.ToolOrigin{Scope: core.ScopeTool, Name: "web_search"}
	readFile := core.ToolOrigin{Scope: core.ScopePlugin, Sub: "mcp_client", Name: "read_file"}
	getUser := core.ToolOrigin{Scope: core.ScopeTool, Name: "get_user_by_id"}
	human := core.ToolOrigin{Scope: core.ScopeHuman, Name: "approve"}
	tests := []struct {
		name string
		p    core.Permissions
		o    core.ToolOrigin
		want core.Access
	}{
		{"empty allow means all", core.Permissions{}, search, core.Allowed},
		{"allow list admits", core.Permissions{Allow: []string{"tool:web_*"}}, search, core.Allowed},
		{"allow list excludes", core.Permissions{Allow: []string{"core:*"}}, search, core.Denied},
		{"deny wins over allow", core.Permissions{Allow: []string{"tool:*"}, Deny: []string{"tool:web_search"}}, search, core.Denied},
		{"deny wins over ask", core.Permissions{Ask: []string{"tool:*"}, Deny: []string{"tool:*"}}, search, core.Denied},
		{"ask wins over allow", core.Permissions{Allow: []string{"tool:*"}, Ask: []string{"tool:web_search"}}, search, core.Gated},
		{"ask admits beyond the allow list", core.Permissions{Allow: []string{"core:*"}, Ask: []string{"plugin:mcp_client/*"}}, readFile, core.Gated},
		{"partial glob in two segments", core.Permissions{Deny: []string{"plugin:mcp_*/read_*"}}, readFile, core.Denied},
		{"inner glob", core.Permissions{Allow: []string{"tool:get_*_by_id"}}, getUser, core.Allowed},
		{"a glob does not cross scopes", core.Permissions{Allow: []string{"plugin:*"}}, search, core.Denied},
		{"human tools are exempt", core.Permissions{Allow: []string{"core:*"}, Deny: []string{"tool:*"}}, human, core.Allowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.p.Decide(tt.o)
			if err != nil || got != tt.want {
				t.Errorf("Decide = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var be *core.BreadError
	if !errors.As(err, &be) || be.Code != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
}
