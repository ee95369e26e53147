package main

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const prefix = "example.com/mono"

// files of a small workspace: a root module, a nested module under it (a/b
// inside a), a sibling cycle (a requires a/b for tests, a/b requires a),
// a third-party replace to keep, and files a zip must not carry.
var tree = map[string]string{
	"go.work": "go 1.26.0\n\nuse (\n\t.\n\t./a\n\t./a/b\n)\n",
	"go.mod": `module example.com/mono

go 1.26.0

require example.com/mono/a v0.0.0

replace example.com/mono/a => ./a
`,
	"root.go": "package mono\n\nimport _ \"example.com/mono/a\"\n",
	"a/go.mod": `module example.com/mono/a

go 1.26.0

require (
	example.com/mono/a/b v0.0.0 // indirect
	example.com/other v1.0.0
)

replace (
	example.com/mono/a/b => ./b
	example.com/mono => ../
)

replace example.com/other => example.com/fork v1.0.1
`,
	"a/a.go":            "package a\n\nconst A = 1\n",
	"a/a_test.go":       "package a\n\nimport _ \"example.com/mono/a/b\"\n",
	"a/testdata/x.txt":  "kept: testdata belongs to the module\n",
	"a/vendor/v/v.go":   "package v\n",
	"a/b/go.mod":        "module example.com/mono/a/b\n\ngo 1.26.0\n\nrequire example.com/mono/a v0.0.0\n\nreplace example.com/mono/a => ../\n",
	"a/b/b.go":          "package b\n\nimport \"example.com/mono/a\"\n\nconst B = a.A + 1\n",
	"scripts/notes.txt": "in no module\n",
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// newRepo writes tree into a fresh git repository, commits it, and adds an
// untracked file that must not reach any zip.
func newRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	for name, body := range tree {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "init")
	if err := os.WriteFile(filepath.Join(dir, "a", "stray.out"), []byte("build output"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func load(t *testing.T, dir string) *Workspace {
	t.Helper()
	ws, err := LoadWorkspace(dir, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestRewriteSetsSiblingsAndDropsTheirReplaces(t *testing.T) {
	dir := newRepo(t)
	ws := load(t, dir)
	if err := ws.RewriteAll("v0.3.0"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "a", "go.mod"))
	want := `module example.com/mono/a

go 1.26.0

require (
	example.com/mono/a/b v0.3.0 // indirect
	example.com/other v1.0.0
)

replace example.com/other => example.com/fork v1.0.1
`
	if string(got) != want {
		t.Fatalf("a/go.mod:\n%s\nwant:\n%s", got, want)
	}
	ws = load(t, dir)
	for _, m := range ws.Modules {
		if probs, _ := ws.Problems(m, "v0.3.0"); len(probs) > 0 {
			t.Errorf("after rewrite: %v", probs)
		}
	}
	if probs, _ := ws.Problems(ws.Modules[0], "v0.4.0"); len(probs) != 1 {
		t.Errorf("root at v0.4.0: problems %v, want the require at v0.3.0", probs)
	}
}

func TestRewriteRefusesAnUnknownSibling(t *testing.T) {
	ws := load(t, newRepo(t))
	m := ws.Modules[0]
	m.GoMod = append(m.GoMod, "require example.com/mono/gone v0.0.0\n"...)
	if _, _, err := ws.Rewrite(m, "v0.3.0"); err == nil || !strings.Contains(err.Error(), "not a module of go.work") {
		t.Fatalf("err = %v", err)
	}
}

func TestVersionsAreChecked(t *testing.T) {
	ws := load(t, newRepo(t))
	for _, v := range []string{"0.1.0", "v1.2", "v2.0.0", "v0.0.0-20240101000000-abcdefabcdef"} {
		if err := ws.checkVersion(v); err == nil {
			t.Errorf("%s accepted", v)
		}
	}
	for _, v := range []string{"v0.1.0", "v1.0.0-rc.1", "v0.0.0-external.1"} {
		if err := ws.checkVersion(v); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
}

func zipNames(t *testing.T, file string) []string {
	t.Helper()
	zr, err := zip.OpenReader(file)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	return names
}

func TestModproxyWritesTrackedFilesPerModule(t *testing.T) {
	dir := newRepo(t)
	ws := load(t, dir)
	proxy := t.TempDir()
	if err := ws.WriteProxy(proxy, "v0.3.0"); err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteProxy(proxy, "v0.2.0"); err != nil {
		t.Fatal(err)
	}
	v := filepath.Join(proxy, "example.com", "mono", "a", "@v")
	got := zipNames(t, filepath.Join(v, "v0.3.0.zip"))
	want := []string{
		"example.com/mono/a@v0.3.0/a.go",
		"example.com/mono/a@v0.3.0/a_test.go",
		"example.com/mono/a@v0.3.0/go.mod",
		"example.com/mono/a@v0.3.0/testdata/x.txt",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("a zip = %q, want %q (no nested module, vendor or untracked file)", got, want)
	}
	root := []string{"go.mod", "go.work", "root.go", "scripts/notes.txt"}
	for i, f := range root {
		root[i] = "example.com/mono@v0.3.0/" + f
	}
	if got := zipNames(t, filepath.Join(proxy, "example.com", "mono", "@v", "v0.3.0.zip")); !slices.Equal(got, root) {
		t.Fatalf("root zip = %q", got)
	}
	mod, _ := os.ReadFile(filepath.Join(v, "v0.3.0.mod"))
	if strings.Contains(string(mod), "v0.0.0") || strings.Contains(string(mod), "=> ./b") {
		t.Fatalf("published go.mod not rewritten:\n%s", mod)
	}
	list, _ := os.ReadFile(filepath.Join(v, "list"))
	if string(list) != "v0.2.0\nv0.3.0\n" {
		t.Fatalf("list = %q", list)
	}
	if on, _ := os.ReadFile(filepath.Join(dir, "a", "go.mod")); string(on) != tree["a/go.mod"] {
		t.Fatal("modproxy changed the work tree's go.mod")
	}
	if err := ws.VerifyProxy(proxy, "v0.3.0"); err != nil {
		t.Fatal(err)
	}
	if err := ws.VerifyProxy(proxy, "v0.4.0"); err == nil || !strings.Contains(err.Error(), "v0.4.0.mod") {
		t.Fatalf("missing version: err = %v", err)
	}
	// A .mod file that kept the development go.mod: replace and v0.0.0.
	if err := os.WriteFile(filepath.Join(v, "v0.3.0.mod"), []byte(tree["a/go.mod"]), 0o644); err != nil {
		t.Fatal(err)
	}
	err := ws.VerifyProxy(proxy, "v0.3.0")
	for _, want := range []string{"differs from the .mod file", "require example.com/mono/a/b v0.0.0", "replace example.com/mono/a/b => ./b"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("kept development go.mod: err = %v, want %q", err, want)
		}
	}
}

// TestGoCommandBuildsFromTheProxy is the end-to-end check: a module outside
// the repository builds against the proxy tree, with the go command
// verifying nothing against the checksum database for the siblings.
func TestGoCommandBuildsFromTheProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	dir := newRepo(t)
	// The third-party require cannot be fetched here: drop it.
	a := filepath.Join(dir, "a", "go.mod")
	body, _ := os.ReadFile(a)
	body = []byte(strings.NewReplacer("\texample.com/other v1.0.0\n", "", "replace example.com/other => example.com/fork v1.0.1\n", "").Replace(string(body)))
	if err := os.WriteFile(a, body, 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "commit", "-q", "-am", "no third party")
	proxy := t.TempDir()
	if err := load(t, dir).WriteProxy(proxy, "v0.3.0"); err != nil {
		t.Fatal(err)
	}
	user := t.TempDir()
	files := map[string]string{
		"go.mod":  "module example.com/user\n\ngo 1.26.0\n\nrequire example.com/mono/a/b v0.3.0\n",
		"main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/mono/a/b\"\n)\n\nfunc main() { fmt.Println(b.B) }\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(user, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	modcache := t.TempDir()
	cmd := exec.Command(gobin, "run", ".")
	cmd.Dir = user
	cmd.Env = append(os.Environ(),
		"GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=file://"+filepath.ToSlash(proxy), "GONOSUMDB="+prefix,
		"GOPRIVATE=", "GONOPROXY=", "GOMODCACHE="+modcache, "GOTOOLCHAIN=local")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != "2" {
		t.Fatalf("go run: %v\n%s%s", err, out, stderr.String())
	}
	// The module cache now holds v0.3.0 of the siblings, read-only; clean
	// it out, leaving the other entry there.
	other := filepath.Join(modcache, "cache", "download", "example.com", "mono", "a", "@v", "v0.1.0.lock")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := load(t, dir).CleanCache(modcache, "v0.3.0"); err != nil {
		t.Fatal(err)
	}
	var left []string
	_ = filepath.WalkDir(modcache, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(filepath.ToSlash(p), "/example.com/") {
			left = append(left, strings.TrimPrefix(filepath.ToSlash(p), filepath.ToSlash(modcache)+"/"))
		}
		return nil
	})
	if !slices.Equal(left, []string{"cache/download/example.com/mono/a/@v/v0.1.0.lock"}) {
		t.Fatalf("left in the module cache: %q", left)
	}
	if _, err := os.Stat(filepath.Join(modcache, "example.com")); err == nil {
		t.Fatal("the emptied example.com directory is still there")
	}
}

func TestImportsMapPackagesToModules(t *testing.T) {
	ws := load(t, newRepo(t))
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "x.go"), []byte("package x\n\nimport (\n\t_ \"example.com/mono/a/b\"\n\t_ \"example.com/mono/a/sub/pkg\"\n\t_ \"fmt\"\n)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mods, err := ws.ImportedModules(src)
	if err != nil || !slices.Equal(mods, []string{"example.com/mono/a", "example.com/mono/a/b"}) {
		t.Fatalf("mods %v, err %v", mods, err)
	}
}
