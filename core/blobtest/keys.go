package blobtest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
)

func keyCases() []testCase {
	return []testCase{
		{name: "keys are generated and unique", run: testUniqueKeys},
		{name: "a missing key is NOT_FOUND", run: testMissingKey},
		{name: "hostile keys never escape the store", run: testHostileKeys},
	}
}

func testUniqueKeys(t *testing.T, _ Features, s core.BlobStore) {
	const n = 200
	seen := make(map[string]bool, n)
	for i := range n {
		// The same bytes every time: a store must not derive keys from
		// content alone.
		ref, err := s.Put(t.Context(), strings.NewReader("same bytes"), "text/plain")
		if err != nil {
			t.Fatalf("Put %d: %v", i, err)
		}
		if ref.Key == "" {
			t.Fatalf("Put %d returned an empty key", i)
		}
		if seen[ref.Key] {
			t.Fatalf("Put %d returned key %s a second time", i, quote(ref.Key))
		}
		seen[ref.Key] = true
	}
}

// sibling returns a key shaped like key that the store did not issue: key
// with its last character changed.
func sibling(key string) string {
	last := key[len(key)-1]
	repl := byte('a')
	if last == 'a' {
		repl = 'b'
	}
	return key[:len(key)-1] + string(repl)
}

// isNotFound reports whether err is the port's NOT_FOUND.
func isNotFound(err error) bool { return errors.Is(err, errNotFound) }

func testMissingKey(t *testing.T, _ Features, s core.BlobStore) {
	ref, err := s.Put(t.Context(), strings.NewReader("present"), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{sibling(ref.Key), "missing", "no-such-blob-0000"} {
		rc, _, err := s.Get(t.Context(), key)
		if rc != nil {
			rc.Close()
		}
		if !isNotFound(err) {
			t.Errorf("Get(%s) of a key never issued: %s (%v), want NOT_FOUND", quote(key), code(err), err)
		}
		var be *core.BreadError
		if err != nil && !errors.As(err, &be) {
			t.Errorf("Get(%s): the error is %T, want a *core.BreadError", quote(key), err)
		}
	}
}

// canary is a file outside any store, which no key may reach.
type canary struct {
	path string
	data []byte
}

func newCanary(t *testing.T) canary {
	t.Helper()
	c := canary{path: filepath.Join(t.TempDir(), "blobtest-canary"), data: []byte("blobtest canary: no blob key may read this file")}
	if err := os.WriteFile(c.path, c.data, 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// hostileKeys are keys no store issues: path traversal in its spellings,
// absolute paths (one to a real file, the canary), encodings, NUL bytes,
// empty and very long keys, and variants of a real key.
func hostileKeys(real string, c canary) []string {
	up := strings.Repeat("../", 40)
	keys := []string{
		"",
		".",
		"..",
		"/",
		"../x",
		"/etc/passwd",
		"a/../../b",
		"%2e%2e/",
		"%2e%2e%2f%2e%2e%2fetc%2fpasswd",
		"..%2f..%2fetc%2fpasswd",
		`..\x`,
		`..\..\windows\win.ini`,
		"a\x00b",
		"\x00",
		strings.Repeat("a", 64<<10),
		strings.Repeat("../", 2000) + "etc/passwd",
		c.path,
		up + c.path,
		"file://" + c.path,
		strings.Repeat("%2e%2e%2f", 40) + strings.TrimPrefix(c.path, "/"),
		real + "\x00",
		real + "\x00.json",
		real + "/",
		real + "/.",
		"./" + real,
		real + "/../" + real,
		"x/../" + real,
		"../" + real,
		real + ".json",
		" " + real,
		real + " ",
		real + "\n",
		strings.ToUpper(real),
		"{" + real + "}",
		"urn:uuid:" + real,
		strings.ReplaceAll(real, "-", ""),
	}
	// A variant that happens to equal the real key (ToUpper of a key
	// without letters) is not hostile.
	return slices.DeleteFunc(keys, func(k string) bool { return k == real })
}

// testHostileKeys asks Get for keys no store issues. Each must be NOT_FOUND
// or VALIDATION_ERROR; none may panic, and none may return bytes, least of
// all the canary's or the stored blob's.
func testHostileKeys(t *testing.T, _ Features, s core.BlobStore) {
	stored := []byte("the one stored blob")
	ref, err := s.Put(t.Context(), bytes.NewBufferString(string(stored)), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	c := newCanary(t)
	for _, key := range hostileKeys(ref.Key, c) {
		guard(t, "Get("+quote(key)+")", func() {
			rc, _, err := s.Get(t.Context(), key)
			if rc != nil {
				got, _ := io.ReadAll(io.LimitReader(rc, 1<<20))
				rc.Close()
				switch {
				case bytes.Equal(got, c.data):
					t.Errorf("Get(%s) escaped the store: it read the canary file %s", quote(key), c.path)
				case bytes.Equal(got, stored):
					t.Errorf("Get(%s) returned the bytes of blob %s, a different key", quote(key), quote(ref.Key))
				}
			}
			if err == nil {
				t.Errorf("Get(%s) succeeded; want NOT_FOUND or VALIDATION_ERROR", quote(key))
				return
			}
			if !isNotFound(err) && !errors.Is(err, errValidation) {
				t.Errorf("Get(%s): %s (%v), want NOT_FOUND or VALIDATION_ERROR", quote(key), code(err), err)
			}
		})
	}
	// The stored blob is untouched.
	if got, _ := readAll(t, s, ref.Key); !bytes.Equal(got, stored) {
		t.Errorf("blob %s changed to %q", quote(ref.Key), trunc(got))
	}
}
