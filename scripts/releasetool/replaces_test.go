package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree writes files (slash paths) under a fresh directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func goMod(path string, rest ...string) string {
	return "module " + path + "\n\ngo 1.26.0\n" + strings.Join(rest, "")
}

// chain is a small workspace: app (two levels down) imports lib/mid, whose
// go.mod requires leaf; leaf needs nothing.
var chain = map[string]string{
	"go.work":            "go 1.26.0\n\nuse (\n\t./apps/app\n\t./lib/mid\n\t./leaf\n)\n",
	"leaf/go.mod":        goMod("example.com/mono/leaf"),
	"leaf/leaf.go":       "package leaf\n\nconst L = 1\n",
	"lib/mid/go.mod":     goMod("example.com/mono/lib/mid", "\nrequire example.com/mono/leaf v0.0.0\n\nreplace example.com/mono/leaf => ../../leaf\n"),
	"lib/mid/mid.go":     "package mid\n\nimport \"example.com/mono/leaf\"\n\nconst M = leaf.L + 1\n",
	"apps/app/go.mod":    goMod("example.com/mono/apps/app"),
	"apps/app/main.go":   "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/mono/lib/mid\"\n)\n\nfunc main() { fmt.Println(mid.M) }\n",
	"apps/app/x_test.go": "package main\n\nimport \"testing\"\n\nfunc TestM(t *testing.T) {}\n",
}

// with returns chain with some files replaced (or added).
func with(changes map[string]string) map[string]string {
	files := map[string]string{}
	for k, v := range chain {
		files[k] = v
	}
	for k, v := range changes {
		files[k] = v
	}
	return files
}

func TestReplacesAreTheSiblingGraph(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  map[string]string // module dir: its go.mod after replaces
		err   string
	}{
		{
			name:  "an import gets a require; the replaces follow it transitively, relative to each module",
			files: chain,
			want: map[string]string{
				"apps/app": goMod("example.com/mono/apps/app", "\nrequire example.com/mono/lib/mid v0.0.0\n\nreplace (\n\texample.com/mono/leaf => ../../leaf\n\texample.com/mono/lib/mid => ../../lib/mid\n)\n"),
				"lib/mid":  chain["lib/mid/go.mod"],
				"leaf":     chain["leaf/go.mod"],
			},
		},
		{
			name: "stale sibling replaces go, third-party ones stay",
			files: with(map[string]string{
				"leaf/go.mod": goMod("example.com/mono/leaf", "\nrequire example.com/other v1.0.0\n\nreplace example.com/mono/lib/mid => ../lib/mid\n\nreplace example.com/other => ../other\n"),
			}),
			want: map[string]string{
				"leaf": goMod("example.com/mono/leaf", "\nrequire example.com/other v1.0.0\n\nreplace example.com/other => ../other\n"),
			},
		},
		{
			name: "a cycle replaces the other side, never itself",
			files: with(map[string]string{
				"leaf/leaf_test.go": "package leaf_test\n\nimport _ \"example.com/mono/lib/mid\"\n",
			}),
			want: map[string]string{
				"leaf":    goMod("example.com/mono/leaf", "\nrequire example.com/mono/lib/mid v0.0.0\n\nreplace example.com/mono/lib/mid => ../lib/mid\n"),
				"lib/mid": chain["lib/mid/go.mod"],
			},
		},
		{
			name: "imports go mod tidy never sees do not count",
			files: with(map[string]string{
				"leaf/gen.go":              "//go:build ignore\n\npackage main\n\nimport _ \"example.com/mono/lib/mid\"\n",
				"leaf/other_os.go":         "//go:build !linux\n\npackage leaf\n\nimport _ \"fmt\"\n",
				"leaf/testdata/x.go":       "package x\n\nimport _ \"example.com/mono/lib/mid\"\n",
				"leaf/_old/x.go":           "package x\n\nimport _ \"example.com/mono/lib/mid\"\n",
				"leaf/nested/go.mod":       goMod("example.com/mono/leaf/nested"),
				"leaf/nested/n.go":         "package nested\n\nimport _ \"example.com/mono/lib/mid\"\n",
				"apps/app/windows_test.go": "//go:build windows && !ignore\n\npackage main\n\nimport _ \"example.com/mono/leaf\"\n",
			}),
			want: map[string]string{
				"leaf":     chain["leaf/go.mod"],
				"apps/app": goMod("example.com/mono/apps/app", "\nrequire (\n\texample.com/mono/leaf v0.0.0\n\texample.com/mono/lib/mid v0.0.0\n)\n\nreplace (\n\texample.com/mono/leaf => ../../leaf\n\texample.com/mono/lib/mid => ../../lib/mid\n)\n"),
			},
		},
		{
			name: "a sibling require outside go.work is an error",
			files: with(map[string]string{
				"leaf/go.mod": goMod("example.com/mono/leaf", "\nrequire example.com/mono/gone v0.0.0\n"),
			}),
			err: "requires example.com/mono/gone, which is not a module of go.work",
		},
		{
			name: "an import no module provides is an error",
			files: with(map[string]string{
				"leaf/x.go": "package leaf\n\nimport _ \"example.com/mono/gone/pkg\"\n",
			}),
			err: "which no module of go.work provides",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, tc.files)
			ws := load(t, dir)
			drift, err := ws.SiblingDrift()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := ws.WriteSiblings(); err != nil {
				t.Fatal(err)
			}
			for modDir, want := range tc.want {
				got, err := os.ReadFile(filepath.Join(dir, modDir, "go.mod"))
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != want {
					t.Errorf("%s/go.mod:\n%s\nwant:\n%s", modDir, got, want)
				}
			}
			changed := 0
			for _, m := range ws.Modules {
				if string(m.GoMod) != tc.files[m.GoModFile()] {
					changed++
				}
			}
			if len(drift) != changed {
				t.Errorf("before writing, drift = %q; want %d go.mod files named", drift, changed)
			}
			if drift, err := load(t, dir).SiblingDrift(); err != nil || len(drift) != 0 {
				t.Errorf("after writing, drift = %q, err %v", drift, err)
			}
		})
	}
}

func TestDriftNamesTheLines(t *testing.T) {
	ws := load(t, writeTree(t, chain))
	drift, err := ws.SiblingDrift()
	if err != nil {
		t.Fatal(err)
	}
	want := "apps/app/go.mod: +example.com/mono/leaf => ../../leaf; +example.com/mono/lib/mid => ../../lib/mid; +require example.com/mono/lib/mid v0.0.0"
	if len(drift) != 1 || drift[0] != want {
		t.Fatalf("drift = %q\nwant   %q", drift, want)
	}
}

func TestRelDir(t *testing.T) {
	for _, tc := range []struct{ from, to, want string }{
		{"", "core", "./core"},
		{"core", "", ".."},
		{"engine", "core", "../core"},
		{"stores/sqlite", "core", "../../core"},
		{"stores/sqlite", "stores/internal/bunstore", "../internal/bunstore"},
		{"a", "a/b", "./b"},
		{"a/b", "a", ".."},
	} {
		if got := relDir(tc.from, tc.to); got != tc.want {
			t.Errorf("relDir(%q, %q) = %q, want %q", tc.from, tc.to, got, tc.want)
		}
	}
}

func TestTidyOrderPutsSiblingsFirst(t *testing.T) {
	ws := load(t, writeTree(t, chain))
	order, err := ws.TidyOrder()
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, m := range order {
		dirs = append(dirs, m.Dir)
	}
	if got := strings.Join(dirs, " "); got != "leaf lib/mid apps/app" {
		t.Fatalf("order = %s", got)
	}
}

// TestGoModTidyNeedsNothingMore runs the go command's own tidy, outside any
// workspace and with no proxy, on the written go.mod files: a missing
// replace would send it to the network and fail.
func TestGoModTidyNeedsNothingMore(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	dir := writeTree(t, chain)
	if err := load(t, dir).WriteSiblings(); err != nil {
		t.Fatal(err)
	}
	order, err := load(t, dir).TidyOrder()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range order {
		cmd := exec.Command(gobin, "mod", "tidy")
		cmd.Dir = filepath.Join(dir, filepath.FromSlash(m.Dir))
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOFLAGS=", "GOTOOLCHAIN=local")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go mod tidy in %s: %v\n%s", m.Dir, err, out)
		}
	}
	if drift, err := load(t, dir).SiblingDrift(); err != nil || len(drift) != 0 {
		t.Fatalf("after go mod tidy, drift = %q, err %v", drift, err)
	}
}
