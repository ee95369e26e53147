package blobfs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/blobfs"
)

func TestPutGet(t *testing.T) {
	s, err := blobfs.New(blobfs.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := s.Put(context.Background(), strings.NewReader("png bytes"), "image/png")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ref.URL, "file://") || ref.Key == "" {
		t.Errorf("ref %+v", ref)
	}
	rc, info, err := s.Get(context.Background(), ref.Key)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	if string(b) != "png bytes" || info.MimeType != "image/png" || info.Size != 9 {
		t.Errorf("got %q %+v", b, info)
	}
}

func TestGetRefusesUnknownAndPathLikeKeys(t *testing.T) {
	s, _ := blobfs.New(blobfs.Options{Dir: t.TempDir()})
	for _, key := range []string{"missing", "../etc/passwd", "", "00000000-0000-0000-0000-000000000000"} {
		_, _, err := s.Get(context.Background(), key)
		var be *core.BreadError
		if !errors.As(err, &be) || be.Code != core.CodeNotFound {
			t.Errorf("Get(%q) = %v, want NOT_FOUND", key, err)
		}
	}
}

func TestMaxBytes(t *testing.T) {
	s, _ := blobfs.New(blobfs.Options{Dir: t.TempDir(), MaxBytes: 4})
	_, err := s.Put(context.Background(), bytes.NewReader([]byte("too long")), "")
	var be *core.BreadError
	if !errors.As(err, &be) || be.Code != core.CodeBodyTooLarge {
		t.Fatalf("got %v", err)
	}
}

func TestConcurrentPuts(t *testing.T) {
	s, _ := blobfs.New(blobfs.Options{Dir: t.TempDir()})
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if _, err := s.Put(context.Background(), strings.NewReader(strings.Repeat("x", i)), "text/plain"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

func TestNewNeedsADir(t *testing.T) {
	if _, err := blobfs.New(blobfs.Options{}); err == nil {
		t.Fatal("want an error")
	}
}
