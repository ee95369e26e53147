package server

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// readAtMost reads what io.ReadAll(io.LimitReader(body, limit)) reads,
// whatever the declared length says.
func TestReadAtMostReadsAsReadAllOfALimitReader(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 40)
	for _, tc := range []struct {
		name            string
		n               int   // bytes sent
		limit, declared int64 // declared -1: chunked
	}{
		{"declared, under the limit", 14, 101, 14},
		{"chunked, under the limit", 14, 101, -1},
		{"declared short of what comes", 30, 101, 10},
		{"declared past what comes", 10, 101, 30},
		{"at the limit", 10, 11, 10},
		{"one past the limit", 11, 11, 11},
		{"far past the limit, chunked", 40, 11, -1},
		{"far past the limit, declared short", 40, 11, 5},
		{"empty, chunked", 0, 11, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, _ := io.ReadAll(io.LimitReader(bytes.NewReader(body[:tc.n]), tc.limit))
			for _, r := range []io.Reader{bytes.NewReader(body[:tc.n]), iotest.OneByteReader(bytes.NewReader(body[:tc.n]))} {
				got, err := readAtMost(r, tc.limit, tc.declared)
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("readAtMost = %q, %v; want %q", got, err, want)
				}
			}
		})
	}
	broken := errors.New("the connection broke")
	if _, err := readAtMost(iotest.ErrReader(broken), 11, 5); !errors.Is(err, broken) {
		t.Errorf("a failing body gave %v, want %v", err, broken)
	}
}
