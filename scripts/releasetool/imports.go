package main

import (
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ImportedModules returns the workspace modules that provide the sibling
// packages imported by the .go files under dirs, with the go command's
// rules for `go mod tidy`: testdata, vendor, dot and underscore directories
// and nested modules skipped, every build tag but "ignore" set.
func (ws *Workspace) ImportedModules(dirs ...string) ([]string, error) {
	fset := token.NewFileSet()
	seen := map[string]bool{}
	var mods []string
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if p == dir {
					return nil
				}
				if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // a nested module: not part of this one
				}
				return nil
			}
			if !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly|parser.ParseComments)
			if err != nil {
				return err
			}
			if ignored(f) {
				return nil
			}
			for _, imp := range f.Imports {
				ip, err := strconv.Unquote(imp.Path.Value)
				if err != nil || !ws.IsSibling(ip) {
					continue
				}
				m, ok := ws.OwnerOfPackage(ip)
				if !ok {
					return fmt.Errorf("%s imports %s, which no module of go.work provides", p, ip)
				}
				if !seen[m.Path] {
					seen[m.Path] = true
					mods = append(mods, m.Path)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(mods)
	return mods, nil
}

// ignored reports whether a file's //go:build line excludes it for `go mod
// tidy`, which takes every tag but "ignore" as both set and unset, whichever
// lets the file in.
func ignored(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			if !constraint.IsGoBuild(c.Text) {
				continue
			}
			expr, err := constraint.Parse(c.Text)
			if err != nil {
				return false
			}
			return !anyTags(expr, true)
		}
	}
	return false
}

// anyTags evaluates a build constraint with every tag but "ignore" taking
// the value prefer asks for (the go command's imports.AnyTags).
func anyTags(x constraint.Expr, prefer bool) bool {
	switch x := x.(type) {
	case *constraint.TagExpr:
		return x.Tag != "ignore" && prefer
	case *constraint.NotExpr:
		return !anyTags(x.X, !prefer)
	case *constraint.AndExpr:
		return anyTags(x.X, prefer) && anyTags(x.Y, prefer)
	case *constraint.OrExpr:
		return anyTags(x.X, prefer) || anyTags(x.Y, prefer)
	}
	return false
}
