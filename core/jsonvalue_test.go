package core_test

import (
	"encoding/json"
	"testing"

	"github.com/breadai/bread/core"
)

// A value answers the same whether it is a live Go value or the raw JSON a
// store or a bus gives back.
func TestJSONValues(t *testing.T) {
	type pair struct {
		A int `json:"a"`
	}
	cases := []struct {
		name     string
		v        any
		asJSON   string // "" for an error
		text     string // "" for an error, unless textOK
		textOK   bool
		optional string // "" for nil
	}{
		{"a string", "hi", `"hi"`, "hi", true, `"hi"`},
		{"raw JSON holding a string", json.RawMessage(`"hi"`), `"hi"`, "hi", true, `"hi"`},
		{"a struct", pair{A: 1}, `{"a":1}`, `{"a":1}`, true, `{"a":1}`},
		{"raw JSON object", json.RawMessage(`{"a":1}`), `{"a":1}`, `{"a":1}`, true, `{"a":1}`},
		{"bytes holding JSON pass through", []byte(`[1,2]`), `[1,2]`, `"WzEsMl0="`, true, `"WzEsMl0="`},
		{"bytes that are not JSON encode", []byte("x"), `"eA=="`, `"eA=="`, true, `"eA=="`},
		{"a number", 42, `42`, `42`, true, `42`},
		{"nil", nil, `null`, `null`, true, ``},
		{"raw null", json.RawMessage(`null`), `null`, ``, true, ``}, // decodes as the empty string
		{"empty raw", json.RawMessage(nil), ``, ``, true, ``},
		{"a nil map", map[string]any(nil), `null`, `null`, true, ``},
		{"a value that does not encode", make(chan int), ``, ``, false, ``},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw, err := core.AsJSON(c.v)
			if (c.asJSON == "" && len(raw) > 0) || (c.asJSON != "" && (err != nil || string(raw) != c.asJSON)) {
				t.Errorf("AsJSON = %s, %v; want %s", raw, err, c.asJSON)
			}
			text, err := core.JSONText(c.v)
			if c.textOK != (err == nil) || text != c.text {
				t.Errorf("JSONText = %q, %v; want %q (ok=%v)", text, err, c.text, c.textOK)
			}
			if got := core.OptionalJSON(c.v); string(got) != c.optional {
				t.Errorf("OptionalJSON = %s, want %s", got, c.optional)
			}
		})
	}
}

// JSONText gives raw JSON holding a string what json.Unmarshal gives,
// whether or not the string has anything to unescape, and other raw JSON
// as it is.
func TestJSONTextOfRawStringsIsUnmarshal(t *testing.T) {
	for _, raw := range []string{
		`"hi"`, `""`, `"a b <&> 'q'"`, `"tab\tx"`, `"q\"x"`, `"\u00e9"`, `"é 🍞"`, "\"bad \xff\"", "\"ctl \x01\"",
		`"unterminated`, `"`, `x"`, `" "x" "`, `{"a":1}`, `12`, `null`, ` "spaced" `,
	} {
		got, err := core.JSONText(json.RawMessage(raw))
		want := raw
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil {
			want = s
		}
		if err != nil || got != want {
			t.Errorf("JSONText(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
}
