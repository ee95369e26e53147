package main

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// Module is one module of the workspace.
type Module struct {
	// Dir is the module's directory relative to the workspace root, slash
	// separated; "" for a module at the root.
	Dir string
	// Path is the module path from its go.mod.
	Path string
	// GoMod is the go.mod as it is on disk.
	GoMod []byte
}

// GoModFile is the module's go.mod relative to the workspace root.
func (m Module) GoModFile() string { return path.Join(m.Dir, "go.mod") }

// TagPrefix is the prefix of the module's version tags: "" for a module at
// the repository root, "core/" for the module in core.
func (m Module) TagPrefix() string {
	if m.Dir == "" {
		return ""
	}
	return m.Dir + "/"
}

// Workspace is the set of modules listed by go.work's use directives.
type Workspace struct {
	// Root is the absolute directory of go.work, taken as the repository
	// root: tags and module directories are relative to it.
	Root string
	// Prefix is the module path prefix of sibling modules.
	Prefix string
	// Modules are sorted by Dir.
	Modules []Module

	byPath map[string]*Module
}

// findRoot returns dir, or the closest ancestor of the working directory
// holding a go.work when dir is empty.
func findRoot(dir string) (string, error) {
	if dir != "" {
		return filepath.Abs(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.work in %s or any parent: pass -C", wd)
		}
		d = parent
	}
}

// LoadWorkspace reads root/go.work and the go.mod of every module it uses.
func LoadWorkspace(root, prefix string) (*Workspace, error) {
	workFile := filepath.Join(root, "go.work")
	data, err := os.ReadFile(workFile)
	if err != nil {
		return nil, err
	}
	wf, err := modfile.ParseWork(workFile, data, nil)
	if err != nil {
		return nil, err
	}
	ws := &Workspace{Root: root, Prefix: strings.TrimSuffix(prefix, "/"), byPath: map[string]*Module{}}
	seenDir := map[string]bool{}
	for _, u := range wf.Use {
		if filepath.IsAbs(u.Path) {
			return nil, fmt.Errorf("%s: use %s: absolute paths are not part of the repository", workFile, u.Path)
		}
		dir := path.Clean(filepath.ToSlash(u.Path))
		if dir == ".." || strings.HasPrefix(dir, "../") {
			return nil, fmt.Errorf("%s: use %s: outside the repository", workFile, u.Path)
		}
		if dir == "." {
			dir = ""
		}
		if seenDir[dir] {
			continue
		}
		seenDir[dir] = true
		m := Module{Dir: dir}
		m.GoMod, err = os.ReadFile(filepath.Join(root, filepath.FromSlash(m.GoModFile())))
		if err != nil {
			return nil, fmt.Errorf("go.work uses %s: %w", u.Path, err)
		}
		m.Path = modfile.ModulePath(m.GoMod)
		if m.Path == "" {
			return nil, fmt.Errorf("%s: no module line", m.GoModFile())
		}
		if !ws.IsSibling(m.Path) {
			return nil, fmt.Errorf("%s: module %s is not under %s", m.GoModFile(), m.Path, ws.Prefix)
		}
		ws.Modules = append(ws.Modules, m)
	}
	if len(ws.Modules) == 0 {
		return nil, errors.New(workFile + ": no use directives")
	}
	slices.SortFunc(ws.Modules, func(a, b Module) int { return strings.Compare(a.Dir, b.Dir) })
	for i := range ws.Modules {
		m := &ws.Modules[i]
		if other, dup := ws.byPath[m.Path]; dup {
			return nil, fmt.Errorf("module %s is both %s and %s", m.Path, other.GoModFile(), m.GoModFile())
		}
		ws.byPath[m.Path] = m
	}
	return ws, nil
}

// IsSibling reports whether a module path is under the workspace's prefix.
func (ws *Workspace) IsSibling(modPath string) bool {
	return modPath == ws.Prefix || strings.HasPrefix(modPath, ws.Prefix+"/")
}

// Module returns the workspace module with that path.
func (ws *Workspace) Module(modPath string) (*Module, bool) {
	m, ok := ws.byPath[modPath]
	return m, ok
}

// OwnerOfFile returns the innermost module whose directory holds file (a
// slash-separated path relative to the root).
func (ws *Workspace) OwnerOfFile(file string) (*Module, bool) {
	var best *Module
	for i := range ws.Modules {
		m := &ws.Modules[i]
		if m.Dir == "" || strings.HasPrefix(file, m.Dir+"/") {
			if best == nil || len(m.Dir) > len(best.Dir) {
				best = m
			}
		}
	}
	return best, best != nil
}

// OwnerOfPackage returns the module providing an import path: the module
// with the longest path that is the import path or a prefix of it.
func (ws *Workspace) OwnerOfPackage(importPath string) (*Module, bool) {
	var best *Module
	for i := range ws.Modules {
		m := &ws.Modules[i]
		if importPath == m.Path || strings.HasPrefix(importPath, m.Path+"/") {
			if best == nil || len(m.Path) > len(best.Path) {
				best = m
			}
		}
	}
	return best, best != nil
}

// VCSPathMismatch returns a non-empty explanation when the go command could
// not find the module in the repository by its path: a module in directory
// D of the repository must be named Prefix/D for the go command to map the
// tag D/vX.Y.Z to it.
func (ws *Workspace) VCSPathMismatch(m Module) string {
	want := ws.Prefix
	if m.Dir != "" {
		want += "/" + m.Dir
	}
	if m.Path == want {
		return ""
	}
	return fmt.Sprintf("module %s lives in %s/ but the go command looks for it in %s/: its tags will not resolve from the repository (only from a proxy serving it)",
		m.Path, dirOrDot(m.Dir), dirOrDot(strings.TrimPrefix(strings.TrimPrefix(m.Path, ws.Prefix), "/")))
}

func dirOrDot(d string) string {
	if d == "" {
		return "."
	}
	return d
}
