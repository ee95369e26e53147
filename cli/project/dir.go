package project

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// listDir returns the paths of dir's entries that keep accepts, sorted by
// name. A missing directory is an empty one: every folder of a project
// (agents/, tools/, evals/, skills/...) is optional.
func listDir(dir string, keep func(fs.DirEntry) bool) ([]string, error) {
	entries, err := os.ReadDir(dir) // sorted by file name
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if keep(e) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

// subdirs lists the directories in dir.
func subdirs(dir string) ([]string, error) {
	return listDir(dir, fs.DirEntry.IsDir)
}

// filesWithSuffix lists the files in dir whose names end with one of
// suffixes.
func filesWithSuffix(dir string, suffixes ...string) ([]string, error) {
	return listDir(dir, func(e fs.DirEntry) bool {
		if e.IsDir() {
			return false
		}
		for _, suf := range suffixes {
			if strings.HasSuffix(e.Name(), suf) {
				return true
			}
		}
		return false
	})
}

// yamlFiles lists the .yaml and .yml files in dir.
func yamlFiles(dir string) ([]string, error) {
	return filesWithSuffix(dir, ".yaml", ".yml")
}
