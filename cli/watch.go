package cli

import (
	"context"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watch reports, debounced, changes to a project's source files (YAML,
// Markdown, JSONL transcripts, scripts), ignoring the .bread state folder and
// database files. New directories are watched as they appear.
func watch(ctx context.Context, dir string, log *slog.Logger) (<-chan struct{}, func(), error) {
	out := make(chan struct{}, 1)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return out, func() {}, err
	}
	add := func(root string) {
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if ignored(dir, path) {
				return filepath.SkipDir
			}
			if err := w.Add(path); err != nil {
				log.Warn("bread dev: cannot watch", "dir", path, "error", err)
			}
			return nil
		})
	}
	add(dir)
	wctx, cancel := context.WithCancel(ctx)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var timer *time.Timer
		var fire <-chan time.Time
		for {
			select {
			case <-wctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if ignored(dir, ev.Name) {
					continue
				}
				if ev.Op&fsnotify.Create != 0 {
					add(ev.Name)
				}
				if timer == nil {
					timer = time.NewTimer(150 * time.Millisecond)
				} else {
					timer.Reset(150 * time.Millisecond)
				}
				fire = timer.C
			case <-fire:
				fire = nil
				select {
				case out <- struct{}{}:
				default:
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				log.Warn("bread dev: watch error", "error", err)
			}
		}
	}()
	return out, func() {
		cancel()
		_ = w.Close()
		<-finished
	}, nil
}

// ignored reports paths whose changes never need a reload.
func ignored(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return true
	}
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		if part == ".bread" || part == ".git" || part == "node_modules" {
			return true
		}
	}
	base := filepath.Base(path)
	for _, suffix := range []string{".db", ".db-wal", ".db-shm", ".db-journal", "~", ".swp"} {
		if strings.HasSuffix(base, suffix) {
			return true
		}
	}
	return false
}
