package core_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/breadai/bread/core"
)

// FuzzDecodeCrumb checks that DecodeCrumb never panics, that every failure is
// a PROTOCOL_DECODE_ERROR, and that whatever it accepts re-encodes to a crumb
// of the same type whose encoding is a fixed point.
func FuzzDecodeCrumb(f *testing.F) {
	for _, path := range goldenFiles(f) {
		f.Add(readFile(f, path))
	}
	for _, c := range constructedCrumbs() {
		b, err := json.Marshal(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		``, `null`, `[]`, `{}`, `{"type":null}`, `{"type":5}`, `{"type":"text:delta","delta":5}`,
		`{"type":"tool:call","args":null,"args":{"n":12345678901234567890}}`,
		`{"type":"agent:error","error":null}`, `{"type":"agent:error","error":{}}`,
		`{"Type":"text:delta","DELTA":"x"}`, `{"type":"loop:end","result":null}`,
		`{"type":"tool:result","result":"<\u2028&>"}`,
	} {
		f.Add([]byte(s))
	}

	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := core.DecodeCrumb(raw)
		if err != nil {
			if c != nil {
				t.Fatalf("crumb %#v returned with error %v", c, err)
			}
			assertDecodeError(t, err, raw)
			return
		}
		if c == nil {
			t.Fatal("nil crumb without an error")
		}
		out, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("decoded crumb does not re-encode: %v", err)
		}
		if k := firstKey(t, out); k != "type" {
			t.Fatalf("first key %q, want type: %s", k, out)
		}
		again, err := core.DecodeCrumb(out)
		if err != nil {
			t.Fatalf("re-encoded crumb does not decode: %v\n%s", err, out)
		}
		if again.CrumbType() != c.CrumbType() {
			t.Fatalf("type changed from %s to %s", c.CrumbType(), again.CrumbType())
		}
		out2, err := json.Marshal(again)
		if err != nil {
			t.Fatalf("second encoding failed: %v", err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("encoding is not a fixed point\nfirst:  %s\nsecond: %s", out, out2)
		}
	})
}
