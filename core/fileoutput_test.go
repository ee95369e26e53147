package core_test

import (
	"encoding/json"
	"testing"

	"github.com/breadai/bread/core"
)

func TestAsFileOutput(t *testing.T) {
	f := core.FileOutput{URI: "bread://blob/k", MimeType: "image/png", Name: "a.png"}
	raw, _ := json.Marshal(f)
	for _, c := range []struct {
		name string
		in   any
		ok   bool
	}{
		{"a FileOutput", f, true},
		{"a pointer", &f, true},
		{"raw JSON", json.RawMessage(raw), true},
		{"a decoded map", map[string]any{"kind": "file", "uri": f.URI, "mimeType": f.MimeType, "name": f.Name}, true},
		{"nil", nil, false},
		{"a nil pointer", (*core.FileOutput)(nil), false},
		{"a string", "bread://blob/k", false},
		{"another kind", map[string]any{"kind": "text", "uri": "x"}, false},
		{"no uri", json.RawMessage(`{"kind":"file"}`), false},
		{"not JSON", json.RawMessage(`{`), false},
		{"unencodable", func() {}, false},
	} {
		got, ok := core.AsFileOutput(c.in)
		if ok != c.ok || (ok && got != f) {
			t.Errorf("%s: %+v %v, want ok=%v", c.name, got, ok, c.ok)
		}
	}
}

func TestValidHTTPToken(t *testing.T) {
	for s, want := range map[string]bool{
		"X-Api-Key": true, "Bearer": true, "a!#$%&'*+-.^_`|~9": true,
		"": false, "X Api": false, "X:Key": false, "é": false, "X\x00": false, "(x)": false,
	} {
		if got := core.ValidHTTPToken(s); got != want {
			t.Errorf("ValidHTTPToken(%q) = %v, want %v", s, got, want)
		}
	}
}
