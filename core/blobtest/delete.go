package blobtest

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/breadai/bread/core"
)

func deleteCases() []testCase {
	return []testCase{
		{name: "Delete removes the blob and only it", needs: needsDelete, run: testDelete},
		{name: "Delete of a missing key is not an error", needs: needsDelete, run: testDeleteMissing},
		{name: "Delete of hostile keys removes nothing", needs: needsDelete, run: testDeleteHostile},
		{name: "a cancelled context fails Delete and keeps the blob", needs: needsDelete, run: testDeleteCancelled},
		{name: "concurrent deletes of one blob", needs: needsDelete, run: testConcurrentDeletes},
	}
}

func testDelete(t *testing.T, _ Features, s core.BlobStore) {
	d := deleter(t, s)
	gone := putPattern(t, s, 11, 10_000, "text/plain")
	kept := putPattern(t, s, 12, 10_000, "text/plain")
	if err := d.Delete(t.Context(), gone.Key); err != nil {
		t.Fatalf("Delete(%s): %v", quote(gone.Key), err)
	}
	rc, _, err := s.Get(t.Context(), gone.Key)
	if rc != nil {
		rc.Close()
	}
	if !isNotFound(err) {
		t.Errorf("Get of a deleted blob: %s (%v), want NOT_FOUND", code(err), err)
	}
	if err := checkPattern(t.Context(), s, kept.Key, 12, 10_000, "text/plain"); err != nil {
		t.Errorf("the other blob after Delete: %v", err)
	}
	// The key is not reissued to a later blob's detriment: a new Put works
	// and the deleted key stays gone.
	again := putPattern(t, s, 13, 100, "text/plain")
	if again.Key == gone.Key {
		t.Errorf("Put reissued the deleted key %s", quote(gone.Key))
	}
}

// testDeleteMissing: the documented choice of core.BlobDeleter is that
// deleting what is not there succeeds, so a repeated Delete is harmless.
func testDeleteMissing(t *testing.T, _ Features, s core.BlobStore) {
	d := deleter(t, s)
	ref := putPattern(t, s, 14, 100, "text/plain")
	if err := d.Delete(t.Context(), ref.Key); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := d.Delete(t.Context(), ref.Key); err != nil {
		t.Errorf("a second Delete of %s: %v, want nil (deleting a missing key is not an error)", quote(ref.Key), err)
	}
	if err := d.Delete(t.Context(), sibling(ref.Key)); err != nil {
		t.Errorf("Delete of a key never issued: %v, want nil", err)
	}
}

// testDeleteHostile deletes keys no store issues, including variants of a
// stored blob's key and paths to a canary file: each returns nil or
// VALIDATION_ERROR, and afterwards the blob and the canary are intact.
func testDeleteHostile(t *testing.T, _ Features, s core.BlobStore) {
	d := deleter(t, s)
	stored := []byte("the one stored blob")
	ref, err := s.Put(t.Context(), bytes.NewBufferString(string(stored)), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	c := newCanary(t)
	for _, key := range hostileKeys(ref.Key, c) {
		if !harmless(key, c) {
			continue // a broken store must not be able to harm the machine running the suite
		}
		guard(t, "Delete("+quote(key)+")", func() {
			if err := d.Delete(t.Context(), key); err != nil && !errors.Is(err, errValidation) {
				t.Errorf("Delete(%s): %s (%v), want nil or VALIDATION_ERROR", quote(key), code(err), err)
			}
		})
	}
	if got, _ := readAll(t, s, ref.Key); !bytes.Equal(got, stored) {
		t.Errorf("blob %s read back as %q after hostile deletes", quote(ref.Key), trunc(got))
	}
	if got, err := os.ReadFile(c.path); err != nil || !bytes.Equal(got, c.data) {
		t.Errorf("a hostile Delete reached the canary file outside the store: %v", err)
	}
}

// harmless reports whether deleting key cannot reach anything outside the
// test's temporary files even in a store that uses keys as paths as they
// come, URL-decoded, with backslashes as separators, or cut at a NUL. Keys
// that could name an existing path other than the canary (".", "..", "/",
// "/etc/passwd", "%2e%2e/", ...) are left to the Get cases.
func harmless(key string, c canary) bool {
	canaryInfo, err := os.Lstat(c.path)
	if err != nil {
		return false
	}
	forms := []string{key, strings.ReplaceAll(key, `\`, "/")}
	if u, err := url.PathUnescape(key); err == nil {
		forms = append(forms, u)
	}
	for _, f := range forms {
		if i := strings.IndexByte(f, 0); i >= 0 {
			forms = append(forms, f[:i])
		}
	}
	for _, f := range forms {
		if f == "" {
			continue
		}
		switch filepath.Clean(f) {
		case ".", "..", "/":
			return false
		}
		f = strings.TrimPrefix(f, "file://")
		info, err := os.Lstat(f)
		if err == nil && !os.SameFile(info, canaryInfo) {
			return false
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENAMETOOLONG) && !errors.Is(err, syscall.EINVAL) {
			return false
		}
	}
	return true
}

func testDeleteCancelled(t *testing.T, _ Features, s core.BlobStore) {
	d := deleter(t, s)
	ref := putPattern(t, s, 15, 1000, "text/plain")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := d.Delete(ctx, ref.Key); !errors.Is(err, context.Canceled) {
		t.Errorf("Delete with a cancelled context: %v, want an error matching context.Canceled", err)
	}
	if err := checkPattern(t.Context(), s, ref.Key, 15, 1000, "text/plain"); err != nil {
		t.Errorf("after a cancelled Delete: %v", err)
	}
}

// testConcurrentDeletes races deletes of one blob with each other and with
// reads: every Delete succeeds, every Get either reads the whole blob or is
// NOT_FOUND, and the blob is gone at the end.
func testConcurrentDeletes(t *testing.T, _ Features, s core.BlobStore) {
	d := deleter(t, s)
	const n = 50_000
	ref := putPattern(t, s, 16, n, "text/plain")
	done := make(chan struct{})
	for w := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			if w%2 == 0 {
				if err := d.Delete(t.Context(), ref.Key); err != nil {
					t.Errorf("concurrent Delete: %v", err)
				}
				return
			}
			if err := checkPattern(t.Context(), s, ref.Key, 16, n, ""); err != nil && !isNotFound(err) {
				// A reader opened before the delete may still fail
				// mid-read on some backends; the contract allows it, but
				// it must not see wrong bytes.
				if strings.Contains(err.Error(), "differs") {
					t.Errorf("concurrent read: %v", err)
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
	rc, _, err := s.Get(t.Context(), ref.Key)
	if rc != nil {
		rc.Close()
	}
	if !isNotFound(err) {
		t.Errorf("Get after the deletes: %s (%v), want NOT_FOUND", code(err), err)
	}
}
