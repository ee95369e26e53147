package core_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/blobfs"
)

// sessionBlobs files blobs by session and maps its URLs back to keys, over
// a file-system store.
type sessionBlobs struct {
	*blobfs.Store
	filed map[string]int
}

func (s *sessionBlobs) PutForSession(ctx context.Context, sessionID string, data io.Reader, mime string) (core.BlobRef, error) {
	s.filed[sessionID]++
	return s.Put(ctx, data, mime)
}

func (s *sessionBlobs) DeleteSession(_ context.Context, sessionID string) (int, error) {
	n := s.filed[sessionID]
	delete(s.filed, sessionID)
	return n, nil
}

func (s *sessionBlobs) KeyOf(url string) (string, bool) {
	key, ok := strings.CutPrefix(url, "blob://")
	return key, ok
}

// plainBlobs is a blob store with no optional part.
type plainBlobs struct{ core.BlobStore }

// wrappedBlobs keeps the capabilities of what it wraps through As.
type wrappedBlobs struct{ core.BlobStore }

func (w wrappedBlobs) As(target any) bool { return core.As(w.BlobStore, target) }

func newFS(t *testing.T) *blobfs.Store {
	t.Helper()
	fs, err := blobfs.New(blobfs.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestBlobsCapabilities(t *testing.T) {
	fs := newFS(t)
	sb := &sessionBlobs{Store: fs, filed: map[string]int{}}
	for _, c := range []struct {
		name  string
		blobs core.BlobStore
		want  core.BlobCapability
	}{
		{"blobfs", fs, core.BlobDelete},
		{"plain", plainBlobs{fs}, 0},
		{"by session", sb, core.BlobDelete | core.BlobKeys | core.BlobSessions},
		{"wrapped, by session", wrappedBlobs{sb}, core.BlobDelete | core.BlobKeys | core.BlobSessions},
	} {
		if got := core.NewBlobs(c.blobs).Capabilities(); got != c.want {
			t.Errorf("%s: Capabilities() = %v, want %v", c.name, got, c.want)
		}
	}
	if n := len(core.BlobCapabilities()); n != 4 {
		t.Errorf("BlobCapabilities() has %d, want 4", n)
	}
}

func TestBlobsFallbacks(t *testing.T) {
	ctx := t.Context()
	b := core.NewBlobs(plainBlobs{newFS(t)})
	ref, err := b.PutForSession(ctx, "s1", strings.NewReader("hi"), "text/plain")
	if err != nil {
		t.Fatalf("PutForSession without sessions: %v", err)
	}
	if rc, _, err := b.Get(ctx, ref.Key); err != nil {
		t.Errorf("the blob PutForSession stored with Put is not there: %v", err)
	} else {
		rc.Close()
	}
	if err := b.Delete(ctx, ref.Key); !errors.Is(err, core.ErrNotImplemented) {
		t.Errorf("Delete without a BlobDeleter = %v, want NOT_IMPLEMENTED", err)
	}
	if _, err := b.DeleteSession(ctx, "s1"); !errors.Is(err, core.ErrNotImplemented) {
		t.Errorf("DeleteSession without sessions = %v, want NOT_IMPLEMENTED", err)
	}
	if key, ok := b.KeyOf(ref.URL); ok {
		t.Errorf("KeyOf without a BlobKeyer = %q, true", key)
	}
}

func TestBlobsThroughAWrapper(t *testing.T) {
	ctx := t.Context()
	sb := &sessionBlobs{Store: newFS(t), filed: map[string]int{}}
	b := core.NewBlobs(wrappedBlobs{sb})
	ref, err := b.PutForSession(ctx, "s1", strings.NewReader("hi"), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := b.DeleteSession(ctx, "s1"); n != 1 || err != nil {
		t.Errorf("DeleteSession = %d, %v; want 1 blob", n, err)
	}
	if key, ok := b.KeyOf("blob://" + ref.Key); !ok || key != ref.Key {
		t.Errorf("KeyOf = %q, %v", key, ok)
	}
	if err := b.Delete(ctx, ref.Key); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Get(ctx, ref.Key); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("Get after Delete = %v, want NOT_FOUND", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, strings.NewReader("x"), ""); !errors.Is(err, core.ErrBlobStoreClosed) {
		t.Errorf("Put after Close = %v, want BLOB_STORE_CLOSED", err)
	}
	if _, ok := b.KeyOf("blob://k"); ok {
		t.Error("KeyOf after Close answered")
	}
}

// TestNilBlobs: no blob store is a nil Blobs, whose every call says so.
func TestNilBlobs(t *testing.T) {
	ctx := t.Context()
	b := core.NewBlobs(nil)
	if b != nil || b.Configured() || b.Has(core.BlobDelete) || b.Capabilities() != 0 || b.Close() != nil {
		t.Fatal("a nil Blobs looks configured")
	}
	_, err1 := b.Put(ctx, strings.NewReader("x"), "")
	_, _, err2 := b.Get(ctx, "k")
	_, err3 := b.PutForSession(ctx, "s", strings.NewReader("x"), "")
	_, err4 := b.DeleteSession(ctx, "s")
	for i, err := range []error{err1, err2, err3, err4, b.Delete(ctx, "k")} {
		if !errors.Is(err, core.ErrBlobStoreNotConfigured) {
			t.Errorf("call %d on no blob store = %v, want BLOB_STORE_NOT_CONFIGURED", i, err)
		}
	}
	var fs *blobfs.Store
	if b.As(&fs) {
		t.Error("As on no blob store found something")
	}
	if core.NewBlobs(core.NewBlobs(newFS(t))).Configured() != true {
		t.Error("NewBlobs of a *Blobs lost it")
	}
}
