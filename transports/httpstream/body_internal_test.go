package httpstream

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http/httptest"
	"reflect"
	"strings"
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

// A run body decodes to what json.Unmarshal makes of it, whether or not
// takePlainInput takes it apart by hand.
func TestDecodeRunBodyIsUnmarshal(t *testing.T) {
	for _, tc := range []struct {
		body  string
		plain bool // takePlainInput takes it
	}{
		{`{"input":"hi"}`, true},
		{`{"input":""}`, true},
		{`{"input":" a b ~!#$%&'()*+,-./:;<=>?@[]^_{|}"}`, true},
		{`{"input":"a\"b"}`, false},
		{`{"input":"a\\b"}`, false},
		{`{"input":"a\nb"}`, false},
		{`{"input":"é"}`, false},
		{"{\"input\":\"a\tb\"}", false},
		{"{\"input\":\"a\x7fb\"}", false},
		{`{"input":"a","skill":"s"}`, false},
		{`{"input":"a"} `, false},
		{` {"input":"a"}`, false},
		{`{"input": "a"}`, false},
		{`{"Input":"a"}`, false},
		{`{"input":"a"}}`, false},
		{`{"input":{"a":"b"}}`, false},
		{`{"input":"`, false},
		{`{"input":"}`, false},
		{`{"session":{"id":"s"},"input":"a"}`, false},
	} {
		t.Run(tc.body, func(t *testing.T) {
			var want runBody
			wantErr := json.Unmarshal([]byte(tc.body), &want)
			var fast runBody
			if got := fast.takePlainInput([]byte(tc.body)); got != tc.plain {
				t.Fatalf("takePlainInput = %v, want %v", got, tc.plain)
			}
			if tc.plain && (wantErr != nil || !reflect.DeepEqual(fast, want)) {
				t.Errorf("takePlainInput made %+v; json.Unmarshal %+v, %v", fast, want, wantErr)
			}
			req := httptest.NewRequest("POST", "/agents/a/run", strings.NewReader(tc.body))
			var got runBody
			err := decodeBody(req, &got)
			if (err != nil) != (wantErr != nil) || !reflect.DeepEqual(got, want) {
				t.Errorf("decodeBody = %+v, %v; json.Unmarshal %+v, %v", got, err, want, wantErr)
			}
		})
	}
}

// BenchmarkDecodeRunBody: the body a short run posts.
func BenchmarkDecodeRunBody(b *testing.B) {
	data := []byte(`{"input":"hi"}`)
	rd := bytes.NewReader(data)
	req := httptest.NewRequest("POST", "/agents/a/run", nil)
	req.Body, req.ContentLength = io.NopCloser(rd), int64(len(data))
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(data)
		var body runBody
		if err := decodeBody(req, &body); err != nil {
			b.Fatal(err)
		}
	}
}
