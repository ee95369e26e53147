package mcpserver

import (
	"slices"
	"testing"
)

// syncList tells the server of a change only where there is one: the SDK
// sends list_changed for every add and remove, so a reload that changed
// nothing must call neither.
func TestSyncListTouchesOnlyChanges(t *testing.T) {
	type def struct{ Desc string }
	tests := []struct {
		name        string
		was, now    map[string]def
		added, gone []string
	}{
		{"unchanged", map[string]def{"a": {"x"}, "b": {"y"}}, map[string]def{"a": {"x"}, "b": {"y"}}, nil, nil},
		{"first", nil, map[string]def{"a": {"x"}}, []string{"a"}, nil},
		{"added", map[string]def{"a": {"x"}}, map[string]def{"a": {"x"}, "b": {"y"}}, []string{"b"}, nil},
		{"redeclared", map[string]def{"a": {"x"}}, map[string]def{"a": {"z"}}, []string{"a"}, nil},
		{"removed", map[string]def{"a": {"x"}, "b": {"y"}}, map[string]def{"a": {"x"}}, nil, []string{"b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var added, gone []string
			syncList(tc.was, tc.now, func(d def) any { return d },
				func(names ...string) { gone = append(gone, names...) },
				func(name string, _ def) { added = append(added, name) })
			slices.Sort(added)
			slices.Sort(gone)
			if !slices.Equal(added, tc.added) || !slices.Equal(gone, tc.gone) {
				t.Errorf("added %v removed %v, want %v and %v", added, gone, tc.added, tc.gone)
			}
		})
	}
}
