package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ImportedModules returns the workspace modules that provide the sibling
// packages imported by the .go files under dirs (testdata, vendor and
// dot/underscore directories skipped, as the go command does).
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
				if p != dir && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(name, ".go") {
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
			if err != nil {
				return err
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
