package blobtest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/breadai/bread/core"
)

// pattern is a deterministic byte stream (xorshift64*) of a given length.
// It is an io.Reader and nothing else: no Len, Seek, WriteTo or ReadAt, so
// a store cannot learn the size up front or read it as one slice; it must
// stream.
type pattern struct {
	state uint64
	left  int64
	buf   [8]byte
	have  int // unread bytes at the end of buf
}

func newPattern(seed uint64, n int64) *pattern {
	return &pattern{state: seed*0x9E3779B97F4A7C15 + 1, left: n}
}

func (p *pattern) step() uint64 {
	p.state ^= p.state >> 12
	p.state ^= p.state << 25
	p.state ^= p.state >> 27
	return p.state * 0x2545F4914F6CDD1D
}

// fill writes the next len(b) bytes of the stream into b, eight at a time
// where it can (the race detector makes per-byte loops slow).
func (p *pattern) fill(b []byte) {
	for len(b) > 0 && p.have > 0 {
		b[0] = p.buf[8-p.have]
		p.have--
		b = b[1:]
	}
	for len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, p.step())
		b = b[8:]
	}
	if len(b) > 0 {
		binary.LittleEndian.PutUint64(p.buf[:], p.step())
		p.have = 8 - copy(b, p.buf[:])
	}
}

func (p *pattern) Read(b []byte) (int, error) {
	if p.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > p.left {
		b = b[:p.left]
	}
	p.fill(b)
	p.left -= int64(len(b))
	return len(b), nil
}

// verifier is an io.Writer comparing what it is given with a pattern.
type verifier struct {
	want     *pattern
	scratch  []byte
	n        int64
	mismatch int64 // offset of the first wrong byte, -1 when none
}

func newVerifier(seed uint64, n int64) *verifier {
	return &verifier{want: newPattern(seed, n), mismatch: -1}
}

func (v *verifier) Write(b []byte) (int, error) {
	if int64(len(b)) > v.want.left {
		return 0, fmt.Errorf("more bytes than the %d written", v.n+v.want.left)
	}
	if cap(v.scratch) < len(b) {
		v.scratch = make([]byte, len(b))
	}
	want := v.scratch[:len(b)]
	_, _ = v.want.Read(want)
	if v.mismatch < 0 && !bytes.Equal(b, want) {
		for i := range b {
			if b[i] != want[i] {
				v.mismatch = v.n + int64(i)
				break
			}
		}
	}
	v.n += int64(len(b))
	return len(b), nil
}

// putPattern stores n pattern bytes of seed and returns the ref.
func putPattern(t *testing.T, s core.BlobStore, seed uint64, n int64, mime string) core.BlobRef {
	t.Helper()
	ref, err := s.Put(t.Context(), newPattern(seed, n), mime)
	if err != nil {
		t.Fatalf("Put of %d bytes: %v", n, err)
	}
	return ref
}

// checkPattern reads key back in a streaming way and reports any
// difference from the pattern of seed and n bytes.
func checkPattern(ctx context.Context, s core.BlobStore, key string, seed uint64, n int64, mime string) error {
	rc, info, err := s.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("Get(%s): %w", quote(key), err)
	}
	defer rc.Close()
	v := newVerifier(seed, n)
	if _, err := io.Copy(v, rc); err != nil {
		return fmt.Errorf("reading %s back after %d bytes: %w", quote(key), v.n, err)
	}
	switch {
	case v.mismatch >= 0:
		return fmt.Errorf("%s: byte %d differs from what was written", quote(key), v.mismatch)
	case v.n != n:
		return fmt.Errorf("%s: read %d bytes back, wrote %d", quote(key), v.n, n)
	case info.Size != n:
		return fmt.Errorf("%s: BlobInfo.Size %d, wrote %d bytes", quote(key), info.Size, n)
	case mime != "" && info.MimeType != mime:
		return fmt.Errorf("%s: BlobInfo.MimeType %q, wrote %q", quote(key), info.MimeType, mime)
	}
	if err := rc.Close(); err != nil {
		return fmt.Errorf("closing %s's reader: %w", quote(key), err)
	}
	return nil
}

// readAll gets key and reads it whole; for small blobs only.
func readAll(t *testing.T, s core.BlobStore, key string) ([]byte, core.BlobInfo) {
	t.Helper()
	rc, info, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%s): %v", quote(key), err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("reading %s: %v", quote(key), err)
	}
	if err := rc.Close(); err != nil {
		t.Errorf("closing %s's reader: %v", quote(key), err)
	}
	return b, info
}

// failingReader yields some bytes, then fails with err.
type failingReader struct {
	left int
	err  error
}

func (r *failingReader) Read(b []byte) (int, error) {
	if r.left <= 0 {
		return 0, r.err
	}
	n := min(len(b), r.left)
	for i := range b[:n] {
		b[i] = 'x'
	}
	r.left -= n
	return n, nil
}

// cancellingReader streams n bytes and cancels its context once it has
// handed out after of them, as a client hanging up mid-upload would.
type cancellingReader struct {
	p      *pattern
	after  int64
	read   int64
	cancel context.CancelFunc
}

func (r *cancellingReader) Read(b []byte) (int, error) {
	if r.read >= r.after && r.cancel != nil {
		r.cancel()
		r.cancel = nil
	}
	n, err := r.p.Read(b)
	r.read += int64(n)
	return n, err
}

var (
	errNotFound   = &core.BreadError{Code: core.CodeNotFound}
	errTooLarge   = &core.BreadError{Code: core.CodeBodyTooLarge}
	errValidation = core.ErrValidation
	errReader     = errors.New("blobtest: the reader failed")
)

// code returns err's BreadError code, or a description of err.
func code(err error) string {
	var be *core.BreadError
	if errors.As(err, &be) {
		return be.Code
	}
	if err == nil {
		return "no error"
	}
	return fmt.Sprintf("%T (not a *core.BreadError)", err)
}
