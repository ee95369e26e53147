package core_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
)

// portsAndCapabilities are the core interfaces no package outside core
// type-asserts: the store, bus, job queue and blob store ports and their
// optional capabilities, which core.Storage, core.Bus, core.Queue and
// core.Blobs find once. Starter and io.Closer are left out: remote agents
// and plugins have them too, and only the portable types ask them of a
// store, bus, queue or blob store.
var portsAndCapabilities = map[string]bool{
	"BreadStore": true, "SessionStore": true, "CheckpointStore": true,
	"RunStore": true, "RunLister": true, "SessionStarters": true, "MessageDeleter": true, "LoopStore": true,
	"CrumbLog": true, "InlineCrumbLog": true, "TaskRunStore": true, "KnowledgeStore": true, "DocumentStore": true, "EvalRunStore": true,
	"Migrator": true, "Pinger": true, "SessionStateStore": true, "RunSubscriptionStore": true,
	"BreadBus": true, "Subscriber": true, "Watcher": true, "JobQueue": true,
	"BlobStore": true, "BlobDeleter": true, "BlobKeyer": true, "SessionBlobStore": true,
}

// TestEveryCapabilityIsChecked: a capability added to a portable type is
// added to the list the assertion check looks for.
func TestEveryCapabilityIsChecked(t *testing.T) {
	var names []string
	for _, c := range core.StoreCapabilities() {
		names = append(names, c.String())
	}
	for _, c := range core.BusCapabilities() {
		names = append(names, c.String())
	}
	for _, c := range core.BlobCapabilities() {
		names = append(names, c.String())
	}
	for _, n := range names {
		if n != "Starter" && n != "io.Closer" && !portsAndCapabilities[n] {
			t.Errorf("capability %s is missing from portsAndCapabilities", n)
		}
	}
}

// TestNoCapabilityAssertions keeps the portable layer the one place that
// looks at an adapter's capabilities: no Go file of the repository outside
// core (tests included) type-asserts, or type-switches on, a store, bus,
// queue or blob store port or capability. It reads the repository around
// the core module, so it runs only in a checkout (go.work beside core).
func TestNoCapabilityAssertions(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Skip("not in a checkout of the repository (no go.work beside core)")
	}
	fset := token.NewFileSet()
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch name := d.Name(); {
			case path == filepath.Join(root, "core"), name == "testdata", name == "node_modules",
				path != root && strings.HasPrefix(name, "."):
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		coreName := importName(f, "github.com/breadai/bread/core")
		if coreName == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var types []ast.Expr
			switch x := n.(type) {
			case *ast.TypeAssertExpr:
				types = append(types, x.Type)
			case *ast.TypeSwitchStmt:
				for _, c := range x.Body.List {
					types = append(types, c.(*ast.CaseClause).List...)
				}
			}
			for _, typ := range types {
				if sel, ok := typ.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == coreName && portsAndCapabilities[sel.Sel.Name] {
						rel, _ := filepath.Rel(root, fset.Position(sel.Pos()).Filename)
						t.Errorf("%s:%d asserts core.%s: go through core.Storage, core.Bus, core.Queue or core.Blobs (Has, then the call)",
							rel, fset.Position(sel.Pos()).Line, sel.Sel.Name)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files outside core; the walk missed the repository", files)
	}
}

// importName is the name f refers to path by, "" when it does not import
// it.
func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		if strings.Trim(imp.Path.Value, `"`) != path {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return "core"
	}
	return ""
}
