package core

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
)

// BlobKeyer is an optional capability of a BlobStore whose URLs do not end
// with the key (stores/s3's presigned URLs, under a key prefix): KeyOf maps
// a URL the store issued back to its key.
type BlobKeyer interface {
	KeyOf(url string) (key string, ok bool)
}

// SessionBlobStore is an optional capability of a BlobStore that files
// blobs under a session and removes a session's blobs at once
// (stores/s3).
type SessionBlobStore interface {
	// PutForSession stores data like Put, under the session, so that
	// DeleteSession removes it with the session's other blobs. An empty
	// session is Put.
	PutForSession(ctx context.Context, sessionID string, data io.Reader, mimeType string) (BlobRef, error)
	// DeleteSession removes every blob PutForSession stored for the
	// session and returns how many it removed.
	DeleteSession(ctx context.Context, sessionID string) (int, error)
}

// Blobs is the blob store as everything above the port uses it, as Storage
// is the store: NewBlobs checks the store's optional parts once, and each
// method calls the store or does what its comment says when the store
// lacks the part. A nil *Blobs is the absence of a blob store: every call
// answers an error matching ErrBlobStoreNotConfigured, so a caller needs no
// nil check of its own. After Close every call fails with an error
// matching ErrBlobStoreClosed. A wrapper around a blob store keeps its
// capabilities by implementing As (see As). A Blobs is safe for concurrent
// use.
type Blobs struct {
	blobs BlobStore
	caps  BlobCapability

	deleter  BlobDeleter
	keyer    BlobKeyer
	sessions SessionBlobStore
	closer   io.Closer

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// BlobCapability names optional parts of a blob store; a set of them is
// their bitwise or.
type BlobCapability uint8

// The optional capabilities of a blob store.
const (
	BlobDelete   BlobCapability = 1 << iota // BlobDeleter: blobs can be removed
	BlobKeys                                // BlobKeyer: URLs map back to keys
	BlobSessions                            // SessionBlobStore: blobs filed by session
	BlobClose                               // io.Closer: released at stop
	blobCapabilityEnd
)

// BlobCapabilities lists every blob store capability, one bit each, in
// order.
func BlobCapabilities() []BlobCapability { return eachBit(blobCapabilityEnd) }

var blobCapabilityNames = [...]string{"BlobDeleter", "BlobKeyer", "SessionBlobStore", "io.Closer"}

// String names the capabilities of c, joined by "|"; "none" for none.
func (c BlobCapability) String() string {
	return capabilityString(c, blobCapabilityNames[:])
}

// NewBlobs returns the Blobs over blobs, with each optional part found
// once, by type assertion or through the store's As method. A store that
// is already a *Blobs is returned as it is; a nil store is a nil Blobs
// (no blob store).
func NewBlobs(blobs BlobStore) *Blobs {
	if blobs == nil {
		return nil
	}
	if b, ok := blobs.(*Blobs); ok {
		return b
	}
	b := &Blobs{blobs: blobs}
	b.deleter = found[BlobDeleter](&b.caps, BlobDelete, blobs)
	b.keyer = found[BlobKeyer](&b.caps, BlobKeys, blobs)
	b.sessions = found[SessionBlobStore](&b.caps, BlobSessions, blobs)
	b.closer = found[io.Closer](&b.caps, BlobClose, blobs)
	return b
}

// Configured reports whether there is a blob store (b is not nil).
func (b *Blobs) Configured() bool { return b != nil }

// Has reports whether the blob store has every capability in c; a nil
// Blobs has none.
func (b *Blobs) Has(c BlobCapability) bool { return b != nil && b.caps&c == c }

// Capabilities returns the set of capabilities the blob store has.
func (b *Blobs) Capabilities() BlobCapability {
	if b == nil {
		return 0
	}
	return b.caps
}

// As finds in the blob store what target points to (see As).
func (b *Blobs) As(target any) bool { return b != nil && As(b.blobs, target) }

// Put implements BlobStore.
func (b *Blobs) Put(ctx context.Context, data io.Reader, mimeType string) (BlobRef, error) {
	if err := b.open(); err != nil {
		return BlobRef{}, err
	}
	return b.blobs.Put(ctx, data, mimeType)
}

// Get implements BlobStore.
func (b *Blobs) Get(ctx context.Context, key string) (io.ReadCloser, BlobInfo, error) {
	if err := b.open(); err != nil {
		return nil, BlobInfo{}, err
	}
	return b.blobs.Get(ctx, key)
}

// Delete implements BlobDeleter; a store that cannot remove blobs answers
// an error matching ErrNotImplemented.
func (b *Blobs) Delete(ctx context.Context, key string) error {
	if err := b.can(BlobDelete); err != nil {
		return err
	}
	return b.deleter.Delete(ctx, key)
}

// KeyOf implements BlobKeyer; a store without it names no URL ("",
// false): its URLs end with the key.
func (b *Blobs) KeyOf(url string) (string, bool) {
	if b.open() != nil || b.keyer == nil {
		return "", false
	}
	return b.keyer.KeyOf(url)
}

// PutForSession implements SessionBlobStore; a store that does not file
// blobs by session stores the blob with Put.
func (b *Blobs) PutForSession(ctx context.Context, sessionID string, data io.Reader, mimeType string) (BlobRef, error) {
	if err := b.open(); err != nil {
		return BlobRef{}, err
	}
	if b.sessions == nil {
		return b.blobs.Put(ctx, data, mimeType)
	}
	return b.sessions.PutForSession(ctx, sessionID, data, mimeType)
}

// DeleteSession implements SessionBlobStore; a store that does not file
// blobs by session answers an error matching ErrNotImplemented.
func (b *Blobs) DeleteSession(ctx context.Context, sessionID string) (int, error) {
	if err := b.can(BlobSessions); err != nil {
		return 0, err
	}
	return b.sessions.DeleteSession(ctx, sessionID)
}

// Close refuses every later call with ErrBlobStoreClosed and closes the
// store (io.Closer). Closing again returns what the first Close returned;
// closing a nil Blobs does nothing.
func (b *Blobs) Close() error {
	if b == nil {
		return nil
	}
	b.closeOnce.Do(func() {
		b.closed.Store(true)
		if b.closer != nil {
			b.closeErr = b.closer.Close()
		}
	})
	return b.closeErr
}

func (b *Blobs) open() error {
	switch {
	case b == nil:
		return errBlobsNotConfigured
	case b.closed.Load():
		return errBlobsClosed
	}
	return nil
}

func (b *Blobs) can(c BlobCapability) error {
	if err := b.open(); err != nil {
		return err
	}
	if b.caps&c == 0 {
		return &BreadError{Code: CodeNotImplemented, Message: "the blob store does not implement core." + c.String(),
			Context: map[string]any{"capability": c.String()}}
	}
	return nil
}

var (
	errBlobsNotConfigured = &BreadError{Code: CodeBlobStoreNotConfigured, Message: "no blob store is configured"}
	errBlobsClosed        = &BreadError{Code: CodeBlobStoreClosed, Message: "the blob store is closed"}
)
