package core_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
)

// FuzzPermissionSelector checks the selector guard against the matcher the
// engine gates tools with: a selector passes CheckPermissionTargets exactly
// when it matches one of the agent's tools (Selector.Matches), whether it is
// exact or a glob; a selector that does not parse is INVALID_PERMISSION and
// nothing panics. Against a plugin's pattern ("fs__*"), a selector that
// matches a name the pattern also matches always passes. The seed corpus
// is in testdata/fuzz/FuzzPermissionSelector, so plain `go test` runs it.
func FuzzPermissionSelector(f *testing.F) {
	for _, s := range [][3]string{
		{"tool:pubx*", "publish", "fs__*"},
		{"tool:pub*", "publish", "*"},
		{"plugin:p/fs__re*", "fs__read", "fs__*"},
		{"skill:*/*", "refund", "x*y"},
		{"core:*", "load_skill", "**"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, raw, name, pattern string) {
		sel, err := core.ParseSelector(raw)
		if err != nil {
			var be *core.BreadError
			if !errors.As(err, &be) || be.Code != core.CodeInvalidPermission {
				t.Fatalf("ParseSelector(%q): %v, want INVALID_PERMISSION", raw, err)
			}
			return
		}
		a := &core.Agent{ID: "a", Tools: []core.Tool{{Name: name}}, Tasks: []string{name},
			Skills: []core.Skill{{ID: "s", Tools: []core.Tool{{Name: name}}}}, Permissions: core.Permissions{Ask: []string{raw}}}
		origins := []core.ToolOrigin{
			{Scope: core.ScopeTool, Name: name}, {Scope: core.ScopeTask, Name: name},
			{Scope: core.ScopeSkill, Sub: "s", Name: name}, {Scope: core.ScopePlugin, Sub: "p", Name: name},
			{Scope: core.ScopeCore, Name: "load_skill"},
		}
		// A plugin's name with a * is a pattern, not a name: leave it out.
		plugins := map[string][]string{"p": {name}}
		if strings.Contains(name, "*") {
			plugins, origins = map[string][]string{}, origins[:3]
			origins = append(origins, core.ToolOrigin{Scope: core.ScopeCore, Name: "load_skill"})
		}
		want := false
		for _, o := range origins {
			want = want || sel.Matches(o)
		}
		err = core.CheckPermissionTargets(a, core.PermissionTargets{Plugins: plugins})
		if (err == nil) != want {
			t.Fatalf("selector %q, tool %q: check says %v, Matches says %v", raw, name, err, want)
		}

		// A plugin's pattern: a name both match proves they overlap.
		if strings.Trim(pattern, "abcdefghijklmnopqrstuvwxyz0123456789_*") != "" || pattern == "" {
			return
		}
		patSel, err := core.ParseSelector("plugin:p/" + pattern)
		if err != nil {
			return
		}
		only := &core.Agent{ID: "a", Permissions: core.Permissions{Deny: []string{raw}}}
		err = core.CheckPermissionTargets(only, core.PermissionTargets{Plugins: map[string][]string{"p": {pattern}}})
		plugin := core.ToolOrigin{Scope: core.ScopePlugin, Sub: "p", Name: name}
		if sel.Matches(plugin) && patSel.Matches(plugin) && err != nil {
			t.Fatalf("selector %q and pattern %q both match %q, yet the check refused: %v", raw, pattern, name, err)
		}
		// A pattern with no * is a name: the check agrees with Matches.
		if !strings.Contains(pattern, "*") {
			exact := sel.Matches(core.ToolOrigin{Scope: core.ScopePlugin, Sub: "p", Name: pattern})
			if (err == nil) != exact {
				t.Fatalf("selector %q, plugin tool %q: check says %v, Matches says %v", raw, pattern, err, exact)
			}
		}
	})
}
