package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/module"
)

// CleanCache removes version of every workspace module from the module
// cache at modcache (go env GOMODCACHE when empty): the extracted tree, the
// download files and the version's line in the cached list, then the
// directories that leaves empty. The go command never refetches a version
// its cache holds, so a version served by a local proxy must not outlive
// the check that used it.
func (ws *Workspace) CleanCache(modcache, version string) error {
	if modcache == "" {
		out, err := exec.Command("go", "env", "GOMODCACHE").Output()
		if err != nil {
			return err
		}
		modcache = strings.TrimSpace(string(out))
		if modcache == "" {
			return errors.New("go env GOMODCACHE is empty")
		}
	}
	escVer, err := module.EscapeVersion(version)
	if err != nil {
		return err
	}
	var dirs []string
	for _, m := range ws.Modules {
		esc, err := module.EscapePath(m.Path)
		if err != nil {
			return err
		}
		tree := filepath.Join(modcache, filepath.FromSlash(esc)+"@"+escVer)
		if err := removeReadOnly(tree); err != nil {
			return err
		}
		dl := filepath.Join(modcache, "cache", "download", filepath.FromSlash(esc), "@v")
		for _, ext := range []string{".info", ".mod", ".zip", ".ziphash", ".lock", ".partial"} {
			if err := os.Remove(filepath.Join(dl, escVer+ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		if err := dropFromList(filepath.Join(dl, "list"), version); err != nil {
			return err
		}
		dirs = append(dirs, filepath.Dir(tree), dl)
	}
	// Empty directories, up to the module cache's top, as the go command
	// would not have left them.
	for _, d := range dirs {
		for d != modcache && strings.HasPrefix(d, modcache+string(filepath.Separator)) {
			if os.Remove(d) != nil {
				break
			}
			d = filepath.Dir(d)
		}
	}
	return nil
}

// removeReadOnly removes a tree of the module cache, whose directories are
// read-only.
func removeReadOnly(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// dropFromList removes version from a cached list file, and the file when
// nothing is left.
func dropFromList(file, version string) error {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	var keep []string
	for _, v := range strings.Fields(string(data)) {
		if v != version {
			keep = append(keep, v)
		}
	}
	if len(keep) == 0 {
		return os.Remove(file)
	}
	return writeAtomic(file, []byte(strings.Join(keep, "\n")+"\n"))
}
