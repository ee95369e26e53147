package mcpclient

import (
	"strings"
	"testing"

	"github.com/breadai/bread/core"
)

func TestToolNameFitsTheModelFacingLimit(t *testing.T) {
	long := strings.Repeat("verbose", 12)
	name, err := toolName("search", long)
	if err != nil {
		t.Fatal(err)
	}
	leaf := core.LeafName(core.ToolOrigin{Scope: core.ScopePlugin, Sub: PluginName, Name: name})
	if len(leaf) > 64 || !core.ValidName(name) || !strings.HasPrefix(name, "search__verbose") {
		t.Fatalf("name %q, leaf %q (%d bytes)", name, leaf, len(leaf))
	}
	if _, err := toolName(strings.Repeat("s", 45), "x"); err == nil {
		t.Error("a server name that leaves no room was accepted")
	}
}
