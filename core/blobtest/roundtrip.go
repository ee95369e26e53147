package blobtest

import (
	"bytes"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
)

func roundTripCases() []testCase {
	return []testCase{
		{name: "bytes, mime type and size round trip", run: testRoundTrip},
		{name: "an empty blob", run: testEmptyBlob},
		{name: "a blob reads back more than once", run: testReadTwice},
		{name: "a large blob streams through a plain io.Reader", run: testLarge},
		{name: "a failing reader fails Put", run: testFailingReader},
		{name: "a blob over MaxBytes is BODY_TOO_LARGE", needs: needsMaxBytes, run: testTooLarge},
	}
}

// allBytes is every byte value, several times over: binary content with
// NULs, high bytes and line ends.
func allBytes() []byte {
	b := make([]byte, 0, 4*256)
	for range 4 {
		for i := range 256 {
			b = append(b, byte(i))
		}
	}
	return b
}

func testRoundTrip(t *testing.T, _ Features, s core.BlobStore) {
	for _, c := range []struct {
		mime string
		data []byte
	}{
		{"image/png", allBytes()},
		{"text/plain; charset=utf-8", []byte("héllo, wörld 🍞\r\n")},
		{"application/json", []byte(`{"a":[1,2,3]}`)},
		{"", []byte("no mime type")},
	} {
		ref, err := s.Put(t.Context(), bytes.NewBufferString(string(c.data)), c.mime)
		if err != nil {
			t.Fatalf("Put(%q): %v", c.mime, err)
		}
		if ref.Key == "" {
			t.Fatalf("Put(%q) returned an empty key", c.mime)
		}
		if ref.URL == "" {
			t.Errorf("Put(%q) returned no URL", c.mime)
		} else if _, err := url.Parse(ref.URL); err != nil {
			t.Errorf("Put(%q) returned URL %q that does not parse: %v", c.mime, ref.URL, err)
		}
		got, info := readAll(t, s, ref.Key)
		if !bytes.Equal(got, c.data) {
			t.Errorf("%q: read back %d bytes %q, wrote %d bytes %q", c.mime, len(got), trunc(got), len(c.data), trunc(c.data))
		}
		if info.Size != int64(len(c.data)) {
			t.Errorf("%q: BlobInfo.Size %d, wrote %d bytes", c.mime, info.Size, len(c.data))
		}
		switch {
		case c.mime == "" && info.MimeType != "" && info.MimeType != "application/octet-stream":
			t.Errorf(`no mime type: BlobInfo.MimeType %q, want "" or "application/octet-stream"`, info.MimeType)
		case c.mime != "" && info.MimeType != c.mime:
			t.Errorf("BlobInfo.MimeType %q, wrote %q", info.MimeType, c.mime)
		}
	}
}

func trunc(b []byte) []byte {
	if len(b) > 32 {
		return b[:32]
	}
	return b
}

func testEmptyBlob(t *testing.T, _ Features, s core.BlobStore) {
	ref, err := s.Put(t.Context(), strings.NewReader(""), "text/plain")
	if err != nil {
		t.Fatalf("Put of an empty blob: %v", err)
	}
	got, info := readAll(t, s, ref.Key)
	if len(got) != 0 || info.Size != 0 {
		t.Errorf("empty blob read back as %d bytes, BlobInfo.Size %d", len(got), info.Size)
	}
	if info.MimeType != "text/plain" {
		t.Errorf("empty blob: BlobInfo.MimeType %q, wrote text/plain", info.MimeType)
	}
}

func testReadTwice(t *testing.T, _ Features, s core.BlobStore) {
	ref := putPattern(t, s, 7, 100_000, "application/octet-stream")
	for i := range 3 {
		if err := checkPattern(t.Context(), s, ref.Key, 7, 100_000, "application/octet-stream"); err != nil {
			t.Errorf("read %d: %v", i+1, err)
		}
	}
}

// testLarge writes LargeBytes (or MaxBytes) from a reader that only reads,
// and verifies them as they stream back; neither side is ever one slice.
func testLarge(t *testing.T, f Features, s core.BlobStore) {
	n := f.largeSize()
	ref := putPattern(t, s, 42, n, "application/octet-stream")
	if err := checkPattern(t.Context(), s, ref.Key, 42, n, "application/octet-stream"); err != nil {
		t.Error(err)
	}
}

func testFailingReader(t *testing.T, _ Features, s core.BlobStore) {
	_, err := s.Put(t.Context(), &failingReader{left: 64 << 10, err: errReader}, "text/plain")
	if err == nil {
		t.Fatal("Put succeeded although its reader failed: a truncated blob was stored")
	}
	if !errors.Is(err, errReader) {
		t.Errorf("Put with a failing reader: %v; want an error wrapping the reader's", err)
	}
}

func testTooLarge(t *testing.T, f Features, s core.BlobStore) {
	_, err := s.Put(t.Context(), newPattern(1, f.MaxBytes+1), "application/octet-stream")
	if !errors.Is(err, errTooLarge) {
		t.Errorf("Put of MaxBytes+1 = %d bytes: %s (%v), want BODY_TOO_LARGE", f.MaxBytes+1, code(err), err)
	}
	ref, err := s.Put(t.Context(), newPattern(2, f.MaxBytes), "application/octet-stream")
	if err != nil {
		t.Fatalf("Put of exactly MaxBytes = %d bytes: %v", f.MaxBytes, err)
	}
	if err := checkPattern(t.Context(), s, ref.Key, 2, f.MaxBytes, ""); err != nil {
		t.Error(err)
	}
}
