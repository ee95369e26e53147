package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// gitFiles returns the files git tracks under the workspace root (the index,
// so staged new files count), slash separated and relative to the root.
func (ws *Workspace) gitFiles() ([]string, error) {
	cmd := exec.Command("git", "-C", ws.Root, "ls-files", "-z", "--cached", "--", ".")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %w", ws.Root, err)
	}
	var files []string
	for f := range strings.SplitSeq(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}

// commitTime is the committer time of HEAD, or now when there is none.
func (ws *Workspace) commitTime() time.Time {
	out, err := exec.Command("git", "-C", ws.Root, "show", "-s", "--format=%cI", "HEAD").Output()
	if err == nil {
		if t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(out))); err == nil {
			return t.UTC()
		}
	}
	return time.Now().UTC()
}

// diskFile is a module file read from the work tree.
type diskFile struct{ rel, abs string }

func (f diskFile) Path() string                 { return f.rel }
func (f diskFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.abs) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.abs) }

// memFile is a module file held in memory: the rewritten go.mod.
type memFile struct {
	rel  string
	data []byte
}

func (f memFile) Path() string                 { return f.rel }
func (f memFile) Lstat() (os.FileInfo, error)  { return memInfo{f}, nil }
func (f memFile) Open() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(f.data)), nil }

type memInfo struct{ f memFile }

func (i memInfo) Name() string       { return path.Base(i.f.rel) }
func (i memInfo) Size() int64        { return int64(len(i.f.data)) }
func (i memInfo) Mode() fs.FileMode  { return 0o644 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }

// WriteProxy writes every module, rewritten for version, into dir as a
// GOPROXY file tree: dir/<escaped path>/@v/{list,V.info,V.mod,V.zip}. A
// module's files are the git-tracked files of its directory, as they are in
// the work tree, less those of nested modules; x/mod/zip drops what a module
// zip may not hold (vendor, nested go.mod trees, symlinks).
func (ws *Workspace) WriteProxy(dir, version string) error {
	if err := ws.checkVersion(version); err != nil {
		return err
	}
	tracked, err := ws.gitFiles()
	if err != nil {
		return err
	}
	filesOf := map[string][]string{} // module path -> files relative to its dir
	for _, f := range tracked {
		m, ok := ws.OwnerOfFile(f)
		if !ok {
			continue
		}
		rel := f
		if m.Dir != "" {
			rel = strings.TrimPrefix(f, m.Dir+"/")
		}
		filesOf[m.Path] = append(filesOf[m.Path], rel)
	}
	info, err := json.Marshal(struct {
		Version string
		Time    string
	}{version, ws.commitTime().Format(time.RFC3339)})
	if err != nil {
		return err
	}
	for _, m := range ws.Modules {
		gomod, warnings, err := ws.Rewrite(m, version)
		if err != nil {
			return err
		}
		for _, w := range warnings {
			fmt.Fprintln(os.Stderr, "warning:", w)
		}
		var files []modzip.File
		hasGoMod := false
		for _, rel := range filesOf[m.Path] {
			if rel == "go.mod" {
				files = append(files, memFile{rel: rel, data: gomod})
				hasGoMod = true
				continue
			}
			abs := filepath.Join(ws.Root, filepath.FromSlash(m.Dir), filepath.FromSlash(rel))
			if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(os.Stderr, "warning: %s: tracked but missing from the work tree, left out\n", path.Join(m.Dir, rel))
				continue
			}
			files = append(files, diskFile{rel: rel, abs: abs})
		}
		if !hasGoMod {
			return fmt.Errorf("%s is not tracked by git", m.GoModFile())
		}
		mv := module.Version{Path: m.Path, Version: version}
		n, err := writeModule(dir, mv, gomod, info, files)
		if err != nil {
			return fmt.Errorf("%s: %w", mv, err)
		}
		fmt.Fprintf(os.Stderr, "%s: %d files\n", mv, n)
	}
	return nil
}

// writeModule writes one module version into the proxy tree at dir and
// returns how many files its zip holds.
func writeModule(dir string, mv module.Version, gomod, info []byte, files []modzip.File) (int, error) {
	esc, err := module.EscapePath(mv.Path)
	if err != nil {
		return 0, err
	}
	escVer, err := module.EscapeVersion(mv.Version)
	if err != nil {
		return 0, err
	}
	vdir := filepath.Join(dir, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return 0, err
	}
	var zbuf bytes.Buffer
	if err := modzip.Create(&zbuf, mv, files); err != nil {
		return 0, err
	}
	zipFile := filepath.Join(vdir, escVer+".zip")
	if err := writeAtomic(zipFile, zbuf.Bytes()); err != nil {
		return 0, err
	}
	cf, err := modzip.CheckZip(mv, zipFile)
	if err != nil {
		return 0, err
	}
	if err := writeAtomic(filepath.Join(vdir, escVer+".mod"), gomod); err != nil {
		return 0, err
	}
	if err := writeAtomic(filepath.Join(vdir, escVer+".info"), info); err != nil {
		return 0, err
	}
	return len(cf.Valid), addToList(filepath.Join(vdir, "list"), mv.Version)
}

// addToList adds version to a proxy's list file, keeping the versions it
// already has, in semver order.
func addToList(file, version string) error {
	versions := []string{version}
	if old, err := os.ReadFile(file); err == nil {
		versions = append(versions, strings.Fields(string(old))...)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	slices.SortFunc(versions, semver.Compare)
	versions = slices.Compact(versions)
	return writeAtomic(file, []byte(strings.Join(versions, "\n")+"\n"))
}

func writeAtomic(file string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), ".tmp-"+filepath.Base(file)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// VerifyProxy checks what a proxy tree at dir publishes for version: every
// module is there, the go.mod inside its zip is its .mod file, and that
// go.mod neither replaces a sibling nor requires one at another version.
// A consumer's build cannot see a leftover replace (the go command ignores
// the replaces of dependencies), but go install pkg@version refuses it.
func (ws *Workspace) VerifyProxy(dir, version string) error {
	if err := ws.checkVersion(version); err != nil {
		return err
	}
	escVer, err := module.EscapeVersion(version)
	if err != nil {
		return err
	}
	var probs []string
	for _, m := range ws.Modules {
		esc, err := module.EscapePath(m.Path)
		if err != nil {
			return err
		}
		vdir := filepath.Join(dir, filepath.FromSlash(esc), "@v")
		mod, err := os.ReadFile(filepath.Join(vdir, escVer+".mod"))
		if err != nil {
			probs = append(probs, err.Error())
			continue
		}
		inZip, err := zippedGoMod(filepath.Join(vdir, escVer+".zip"), module.Version{Path: m.Path, Version: version})
		if err != nil {
			probs = append(probs, err.Error())
			continue
		}
		if !bytes.Equal(inZip, mod) {
			probs = append(probs, fmt.Sprintf("%s@%s: the go.mod in the zip differs from the .mod file", m.Path, version))
		}
		p, err := ws.Problems(Module{Dir: m.Dir, Path: m.Path, GoMod: mod}, version)
		if err != nil {
			return err
		}
		for _, s := range p {
			probs = append(probs, fmt.Sprintf("%s@%s %s", m.Path, version, s))
		}
	}
	if len(probs) > 0 {
		return fmt.Errorf("%s does not publish the workspace at %s:\n  %s", dir, version, strings.Join(probs, "\n  "))
	}
	return nil
}

// zippedGoMod returns the go.mod at the root of a module zip.
func zippedGoMod(zipFile string, mv module.Version) ([]byte, error) {
	zr, err := zip.OpenReader(zipFile)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	f, err := zr.Open(mv.Path + "@" + mv.Version + "/go.mod")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", zipFile, err)
	}
	defer f.Close()
	return io.ReadAll(f)
}
