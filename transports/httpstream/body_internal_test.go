package httpstream

import (
	"bytes"
	"io"
	"net/http/httptest"
	"testing"
	"testing/iotest"
)

// readBody reads the whole body whatever its declared length says.
func TestReadBodyReadsTheWholeBody(t *testing.T) {
	body := []byte(`{"input":"hi","skill":"a longer body than declared"}`)
	for _, tc := range []struct {
		name     string
		declared int64
	}{
		{"declared", int64(len(body))},
		{"chunked", -1},
		{"declared short", 10},
		{"declared long", int64(len(body)) + 10},
		{"declared huge", 1 << 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []io.Reader{bytes.NewReader(body), iotest.OneByteReader(bytes.NewReader(body))} {
				req := httptest.NewRequest("POST", "/agents/a/run", r)
				req.ContentLength = tc.declared
				got, err := readBody(req)
				if err != nil || !bytes.Equal(got, body) {
					t.Errorf("readBody = %q, %v; want %q", got, err, body)
				}
			}
		})
	}
}
