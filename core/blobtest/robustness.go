package blobtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

func concurrencyCases() []testCase {
	return []testCase{
		{name: "concurrent writers read back their own bytes", run: testConcurrentWriters},
		{name: "concurrent readers of one blob", run: testConcurrentReaders},
	}
}

func contextCases() []testCase {
	return []testCase{
		{name: "a cancelled context fails Put and Get", run: testCancelled},
		{name: "cancelling during Put's upload fails the Put", run: testCancelMidUpload},
	}
}

func readerCases() []testCase {
	return []testCase{
		{name: "a reader closed early releases its resources", run: testEarlyClose},
	}
}

// testConcurrentWriters has workers each put blobs of their own content and
// size and read them back while the others write. Run it with -race.
func testConcurrentWriters(t *testing.T, f Features, s core.BlobStore) {
	const workers, each = 16, 3
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		keys = map[string]int{}
	)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				seed := uint64(w*each + i + 1)
				n := int64(1+w*4099+i*511) % 200_000
				if f.MaxBytes > 0 {
					n = min(n, f.MaxBytes)
				}
				mime := fmt.Sprintf("application/x-worker-%d", w)
				ref, err := s.Put(t.Context(), newPattern(seed, n), mime)
				if err != nil {
					t.Errorf("worker %d: Put: %v", w, err)
					return
				}
				mu.Lock()
				if other, dup := keys[ref.Key]; dup {
					t.Errorf("workers %d and %d got the same key %s", other, w, quote(ref.Key))
				}
				keys[ref.Key] = w
				mu.Unlock()
				if err := checkPattern(t.Context(), s, ref.Key, seed, n, mime); err != nil {
					t.Errorf("worker %d: %v", w, err)
				}
			}
		})
	}
	wg.Wait()
}

func testConcurrentReaders(t *testing.T, _ Features, s core.BlobStore) {
	const n = 300_000
	ref := putPattern(t, s, 9, n, "application/octet-stream")
	var wg sync.WaitGroup
	for r := range 8 {
		wg.Go(func() {
			if err := checkPattern(t.Context(), s, ref.Key, 9, n, "application/octet-stream"); err != nil {
				t.Errorf("reader %d: %v", r, err)
			}
		})
	}
	wg.Wait()
}

// testCancelled calls Put and Get with a context cancelled beforehand: both
// fail with an error matching context.Canceled, and Get returns no reader.
func testCancelled(t *testing.T, _ Features, s core.BlobStore) {
	ref, err := s.Put(t.Context(), strings.NewReader("kept"), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Put(ctx, strings.NewReader("never stored"), "text/plain"); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a cancelled context: %v, want an error matching context.Canceled", err)
	}
	rc, _, err := s.Get(ctx, ref.Key)
	if rc != nil {
		rc.Close()
		if err == nil {
			t.Error("Get with a cancelled context returned a reader and no error")
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Get with a cancelled context: %v, want an error matching context.Canceled", err)
	}
	if got, _ := readAll(t, s, ref.Key); string(got) != "kept" {
		t.Errorf("blob read back as %q after the cancelled calls", got)
	}
}

// testCancelMidUpload cancels the context while Put is reading its data, as
// a client that hangs up mid-upload does. The store must notice and fail
// instead of storing the rest; a store that only checks the context on
// entry stores the whole blob and fails the case.
func testCancelMidUpload(t *testing.T, f Features, s core.BlobStore) {
	n := int64(8 << 20)
	if f.MaxBytes > 0 {
		n = min(n, f.MaxBytes)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r := &cancellingReader{p: newPattern(3, n), after: n / 8, cancel: cancel}
	ref, err := s.Put(ctx, r, "application/octet-stream")
	if err == nil {
		t.Fatalf("Put succeeded (key %s) although its context was cancelled after %d of %d bytes", quote(ref.Key), n/8, n)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Put cancelled mid-upload: %v, want an error matching context.Canceled", err)
	}
}

// openFDs counts the process's open file descriptors where the platform
// shows them (Linux), or returns -1.
func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}

// settle waits for fn to drop to at most limit, for up to 5 s, and returns
// its last value.
func settle(fn func() int, limit int) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		v := fn()
		if v <= limit || time.Now().After(deadline) {
			return v
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// testEarlyClose opens a blob many times, reads a little of it and closes
// the reader: neither file descriptors (on Linux) nor goroutines may pile
// up, and the blob stays readable in full.
func testEarlyClose(t *testing.T, _ Features, s core.BlobStore) {
	const n, rounds, slack = 1 << 20, 100, 10
	ref := putPattern(t, s, 5, n, "application/octet-stream")
	// One full read first, so connection pools and caches are warm.
	if err := checkPattern(t.Context(), s, ref.Key, 5, n, ""); err != nil {
		t.Fatal(err)
	}
	fds, gs := openFDs(), runtime.NumGoroutine()
	for i := range rounds {
		rc, _, err := s.Get(t.Context(), ref.Key)
		if err != nil {
			t.Fatalf("Get %d: %v", i, err)
		}
		if _, err := io.ReadFull(rc, make([]byte, 10)); err != nil {
			t.Fatalf("reading the first bytes: %v", err)
		}
		if err := rc.Close(); err != nil {
			t.Errorf("Close after a partial read: %v", err)
		}
		guard(t, "a second Close", func() { _ = rc.Close() })
	}
	if fds >= 0 {
		if got := settle(openFDs, fds+slack); got > fds+slack {
			t.Errorf("%d file descriptors open after %d early-closed readers, %d before: readers leak", got, rounds, fds)
		}
	}
	if got := settle(runtime.NumGoroutine, gs+slack); got > gs+slack {
		t.Errorf("%d goroutines after %d early-closed readers, %d before: readers leak", got, rounds, gs)
	}
	if err := checkPattern(t.Context(), s, ref.Key, 5, n, ""); err != nil {
		t.Errorf("after the early closes: %v", err)
	}
}
