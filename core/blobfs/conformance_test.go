package blobfs_test

import (
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/blobfs"
	"github.com/breadai/bread/core/blobtest"
)

func TestConformance(t *testing.T) {
	blobtest.Run(t, blobtest.Features{Delete: true}, func(t *testing.T) core.BlobStore { return newStore(t, 0) })
}

func TestConformanceWithMaxBytes(t *testing.T) {
	blobtest.Run(t, blobtest.Features{Delete: true, MaxBytes: 1 << 20}, func(t *testing.T) core.BlobStore { return newStore(t, 1<<20) })
}

func newStore(t *testing.T, maxBytes int64) *blobfs.Store {
	s, err := blobfs.New(blobfs.Options{Dir: t.TempDir(), MaxBytes: maxBytes})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
