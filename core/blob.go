package core

import (
	"context"
	"io"
)

// BlobStore keeps binary content (files a model or tool produces). It is a
// seam of its own because a blob backend cannot reasonably be a BreadStore.
type BlobStore interface {
	// Put stores data and returns a reference with a generated key and a URL
	// that Get (or an HTTP client, for remote backends) can read back.
	Put(ctx context.Context, data io.Reader, mimeType string) (BlobRef, error)
	// Get opens a stored blob. A missing key is an error matching
	// ErrNotFound's code NOT_FOUND.
	Get(ctx context.Context, key string) (io.ReadCloser, BlobInfo, error)
}

// BlobRef identifies a stored blob.
type BlobRef struct {
	Key string `json:"key"`
	URL string `json:"url"`
}

// BlobInfo describes a stored blob.
type BlobInfo struct {
	MimeType string `json:"mimeType,omitempty"`
	Size     int64  `json:"size"`
}

// BlobDeleter is the optional capability of a BlobStore that can remove
// blobs; callers discover it with a type assertion:
//
//	if d, ok := blobs.(core.BlobDeleter); ok { err = d.Delete(ctx, key) }
//
// Delete removes the blob with the given key, so that Get of it is NOT_FOUND
// from then on. Deleting a key that does not exist (never issued, already
// deleted, or malformed) is not an error: Delete returns nil, so a retried
// or repeated Delete succeeds. A malformed key may instead be refused with
// VALIDATION_ERROR; either way Delete never touches anything outside the
// store. A reader Get returned before the Delete may go on reading or fail,
// as the backend allows.
type BlobDeleter interface {
	Delete(ctx context.Context, key string) error
}
