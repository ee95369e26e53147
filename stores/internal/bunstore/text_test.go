package bunstore

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/breadai/bread/core"
)

func TestLikePatternTakesWildcardsLiterally(t *testing.T) {
	for query, want := range map[string]string{
		"":          "%%",
		"cat":       "%cat%",
		`50%_off\`:  `%50\%\_off\\%`,
		"a\\%b_c%_": `%a\\\%b\_c\%\_%`,
	} {
		if got := likePattern(query); got != want {
			t.Errorf("likePattern(%q) = %q, want %q", query, got, want)
		}
	}
}

func TestNULLookups(t *testing.T) {
	if hasNUL("a", "b") || !hasNUL("a", "b\x00") {
		t.Error("hasNUL")
	}
	if tagsHaveNUL(map[string]string{"k": "v"}) || !tagsHaveNUL(map[string]string{"k": "\x00"}) {
		t.Error("tagsHaveNUL")
	}
}

func TestRawJSON(t *testing.T) {
	e := newErrs("fake store")
	for _, c := range []struct {
		in    string
		valid bool
	}{{"", true}, {`{"a":1}`, true}, {`{"a":`, false}, {"\"\xff\"", false}} {
		got, err := e.rawJSON("payload", json.RawMessage(c.in))
		switch {
		case c.valid && err != nil:
			t.Errorf("rawJSON(%q): %v", c.in, err)
		case c.valid && string(got) != c.in:
			t.Errorf("rawJSON(%q) = %q", c.in, got)
		case c.in == "" && got != nil:
			t.Errorf("rawJSON(empty) must be NULL, got %q", got)
		case !c.valid && !errors.Is(err, core.ErrValidation):
			t.Errorf("rawJSON(%q): want VALIDATION_ERROR, got %v", c.in, err)
		}
	}
	if tags, err := e.marshalTags(nil); err != nil || tags != "{}" {
		t.Errorf("marshalTags(nil) = %q, %v", tags, err)
	}
	if got := nonNil(nil); got == nil || len(got) != 0 {
		t.Errorf("nonNil(nil) = %#v", got)
	}
}
