package blobfs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"github.com/google/uuid"

	"github.com/breadai/bread/core"
)

// Store keeps blobs in a directory. It is safe for concurrent use.
type Store struct {
	dir string
	// MaxBytes caps one blob (0: no cap).
	maxBytes int64
}

// Options configure a Store.
type Options struct {
	// Dir is where blobs live; it is created if missing.
	Dir string
	// MaxBytes caps the size of one blob; 0 means no cap.
	MaxBytes int64
}

var (
	_ core.BlobStore   = (*Store)(nil)
	_ core.BlobDeleter = (*Store)(nil)
)

// New opens (creating if needed) a blob directory.
func New(opts Options) (*Store, error) {
	if opts.Dir == "" {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "blobfs: Dir is required"}
	}
	abs, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("blobfs: %w", err)
	}
	if err := os.MkdirAll(abs, 0o750); err != nil {
		return nil, fmt.Errorf("blobfs: create %s: %w", abs, err)
	}
	return &Store{dir: abs, maxBytes: opts.MaxBytes}, nil
}

type meta struct {
	MimeType string `json:"mimeType,omitempty"`
	Size     int64  `json:"size"`
}

// Put stores data. It writes to a temporary file and renames it into place,
// so a reader never sees a partial blob.
func (s *Store) Put(ctx context.Context, data io.Reader, mimeType string) (core.BlobRef, error) {
	if err := ctx.Err(); err != nil {
		return core.BlobRef{}, err
	}
	key := uuid.NewString()
	tmp, err := os.CreateTemp(s.dir, ".put-*")
	if err != nil {
		return core.BlobRef{}, fmt.Errorf("blobfs: %w", err)
	}
	defer os.Remove(tmp.Name())
	src := data
	if s.maxBytes > 0 {
		src = io.LimitReader(data, s.maxBytes+1)
	}
	n, err := io.Copy(tmp, ctxReader{ctx, src})
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return core.BlobRef{}, err
		}
		return core.BlobRef{}, fmt.Errorf("blobfs: write: %w", err)
	}
	if s.maxBytes > 0 && n > s.maxBytes {
		return core.BlobRef{}, core.Errorf(core.CodeBodyTooLarge, "blob exceeds %d bytes", s.maxBytes)
	}
	m, _ := json.Marshal(meta{MimeType: mimeType, Size: n})
	if err := os.WriteFile(s.path(key)+".json", m, 0o640); err != nil {
		return core.BlobRef{}, fmt.Errorf("blobfs: write metadata: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path(key)); err != nil {
		_ = os.Remove(s.path(key) + ".json")
		return core.BlobRef{}, fmt.Errorf("blobfs: %w", err)
	}
	return core.BlobRef{Key: key, URL: (&url.URL{Scheme: "file", Path: s.path(key)}).String()}, nil
}

// Get opens a blob. An unknown or malformed key is NOT_FOUND.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, core.BlobInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, core.BlobInfo{}, err
	}
	if !validKey(key) {
		return nil, core.BlobInfo{}, notFound(key)
	}
	raw, err := os.ReadFile(s.path(key) + ".json")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, core.BlobInfo{}, notFound(key)
	}
	if err != nil {
		return nil, core.BlobInfo{}, fmt.Errorf("blobfs: %w", err)
	}
	var m meta
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, core.BlobInfo{}, fmt.Errorf("blobfs: metadata of %s: %w", key, err)
	}
	f, err := os.Open(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, core.BlobInfo{}, notFound(key)
	}
	if err != nil {
		return nil, core.BlobInfo{}, fmt.Errorf("blobfs: %w", err)
	}
	return f, core.BlobInfo{MimeType: m.MimeType, Size: m.Size}, nil
}

// Delete removes a blob. A key that names no blob, malformed ones included,
// is not an error (see core.BlobDeleter). The data file goes first, so a
// concurrent Get sees the whole blob or NOT_FOUND.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !validKey(key) {
		return nil
	}
	for _, p := range []string{s.path(key), s.path(key) + ".json"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("blobfs: delete: %w", err)
		}
	}
	return nil
}

func (s *Store) path(key string) string { return filepath.Join(s.dir, key) }

// validKey accepts exactly the keys Put issues: UUIDs in their canonical
// lower-case 36-character form. uuid.Validate alone also takes the braced,
// urn:uuid: and dash-less spellings and upper case, which would name other
// files, or on a case-insensitive file system the same blob under a second
// key.
func validKey(key string) bool {
	id, err := uuid.Parse(key)
	return err == nil && id.String() == key
}

// ctxReader fails reads once ctx is done, so a cancelled upload stops
// instead of writing the rest of its body.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func notFound(key string) error {
	return &core.BreadError{Code: core.CodeNotFound, Message: "blob " + key + " not found"}
}
