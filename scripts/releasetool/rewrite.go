package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// checkVersion fails unless version is a canonical semantic version that
// every module of the workspace can carry (no /vN suffix means v0 or v1).
func (ws *Workspace) checkVersion(version string) error {
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return fmt.Errorf("version %q is not a canonical semantic version like v1.2.3 or v0.1.0-rc.1", version)
	}
	if module.IsPseudoVersion(version) {
		return fmt.Errorf("version %q is a pseudo-version", version)
	}
	for _, m := range ws.Modules {
		if err := module.Check(m.Path, version); err != nil {
			return err
		}
	}
	return nil
}

// Rewrite returns m's go.mod with every require of a sibling module set to
// version and every replace of a sibling module dropped. Other requires and
// replaces are kept; warnings name kept replaces that point at a directory.
func (ws *Workspace) Rewrite(m Module, version string) (out []byte, warnings []string, err error) {
	f, err := modfile.Parse(m.GoModFile(), m.GoMod, nil)
	if err != nil {
		return nil, nil, err
	}
	var siblings []string
	for _, r := range f.Require {
		if !ws.IsSibling(r.Mod.Path) {
			continue
		}
		if _, ok := ws.Module(r.Mod.Path); !ok {
			return nil, nil, fmt.Errorf("%s: requires %s, which is not a module of go.work", m.GoModFile(), r.Mod.Path)
		}
		siblings = append(siblings, r.Mod.Path)
	}
	for _, p := range siblings {
		if err := f.AddRequire(p, version); err != nil {
			return nil, nil, err
		}
	}
	var drop []module.Version
	for _, r := range f.Replace {
		if ws.IsSibling(r.Old.Path) {
			drop = append(drop, r.Old)
			continue
		}
		if r.New.Version == "" {
			warnings = append(warnings, fmt.Sprintf("%s: keeps replace %s => %s, a directory outside the published module", m.GoModFile(), r.Old.Path, r.New.Path))
		}
	}
	for _, o := range drop {
		if err := f.DropReplace(o.Path, o.Version); err != nil {
			return nil, nil, err
		}
	}
	f.Cleanup()
	out, err = f.Format()
	if err != nil {
		return nil, nil, err
	}
	return out, warnings, nil
}

// Problems lists what in m's go.mod keeps it from being published at
// version: sibling requires at another version and sibling replaces.
func (ws *Workspace) Problems(m Module, version string) ([]string, error) {
	f, err := modfile.Parse(m.GoModFile(), m.GoMod, nil)
	if err != nil {
		return nil, err
	}
	var probs []string
	for _, r := range f.Require {
		if ws.IsSibling(r.Mod.Path) && r.Mod.Version != version {
			probs = append(probs, fmt.Sprintf("%s: require %s %s, not %s", m.GoModFile(), r.Mod.Path, r.Mod.Version, version))
		}
	}
	for _, r := range f.Replace {
		if ws.IsSibling(r.Old.Path) {
			probs = append(probs, fmt.Sprintf("%s: replace %s => %s", m.GoModFile(), r.Old.Path, strings.TrimSpace(r.New.Path+" "+r.New.Version)))
		}
	}
	return probs, nil
}

// RewriteAll rewrites every module's go.mod in place.
func (ws *Workspace) RewriteAll(version string) error {
	if err := ws.checkVersion(version); err != nil {
		return err
	}
	for i := range ws.Modules {
		m := &ws.Modules[i]
		out, warnings, err := ws.Rewrite(*m, version)
		if err != nil {
			return err
		}
		for _, w := range warnings {
			fmt.Fprintln(os.Stderr, "warning:", w)
		}
		if string(out) == string(m.GoMod) {
			continue
		}
		if err := ws.writeGoMod(m, out); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "rewrote %s\n", m.GoModFile())
	}
	return nil
}

// writeGoMod replaces m's go.mod on disk (keeping its mode) and in m.
func (ws *Workspace) writeGoMod(m *Module, out []byte) error {
	file := filepath.Join(ws.Root, filepath.FromSlash(m.GoModFile()))
	info, err := os.Stat(file)
	if err != nil {
		return err
	}
	if err := os.WriteFile(file, out, info.Mode().Perm()); err != nil {
		return err
	}
	m.GoMod = out
	return nil
}
