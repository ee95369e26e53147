package blobtest

import (
	"bytes"
	"io"
	"testing"
)

// The pattern must be the same stream whatever the read sizes, or the
// verifier would report stores that read in other chunk sizes as corrupt.
func TestPatternIsIndependentOfReadSizes(t *testing.T) {
	const n = 10_007
	whole, err := io.ReadAll(io.LimitReader(newPattern(3, n), n))
	if err != nil || len(whole) != n {
		t.Fatalf("read %d bytes: %v", len(whole), err)
	}
	for _, size := range []int{1, 3, 7, 8, 9, 4096} {
		p, got := newPattern(3, n), make([]byte, 0, n)
		buf := make([]byte, size)
		for {
			k, err := p.Read(buf)
			got = append(got, buf[:k]...)
			if err == io.EOF {
				break
			}
		}
		if !bytes.Equal(got, whole) {
			t.Errorf("reads of %d bytes give another stream", size)
		}
	}
}

func TestVerifierFindsTheFirstWrongByte(t *testing.T) {
	data, _ := io.ReadAll(newPattern(4, 5000))
	v := newVerifier(4, 5000)
	_, _ = v.Write(data[:1000])
	data[2345] ^= 1
	_, _ = v.Write(data[1000:])
	if v.mismatch != 2345 || v.n != 5000 {
		t.Errorf("mismatch %d after %d bytes, want 2345 after 5000", v.mismatch, v.n)
	}
	if _, err := v.Write([]byte{0}); err == nil {
		t.Error("a byte past the end was accepted")
	}
}
