package postgres

import (
	"strings"
	"testing"
)

func TestTextArgsEncodeEachStatement(t *testing.T) {
	var ta textArgs
	for _, tc := range []struct {
		args []any
		want []string // "<nil>" for NULL
	}{
		{[]any{"run-1", int64(-42), nil, `{"a":1}`, 7}, []string{"run-1", "-42", "<nil>", `{"a":1}`, "7"}},
		{[]any{"", nil}, []string{"", "<nil>"}},
		{[]any{strings.Repeat("x", 300), int64(9), "y"}, []string{strings.Repeat("x", 300), "9", "y"}},
		{[]any{nil, "after a larger statement"}, []string{"<nil>", "after a larger statement"}},
	} {
		got, err := ta.encode(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tc.want) {
			t.Fatalf("encode(%v): %d params", tc.args, len(got))
		}
		for i, w := range tc.want {
			switch {
			case w == "<nil>" && got[i] != nil:
				t.Errorf("encode(%v)[%d] = %q, want NULL", tc.args, i, got[i])
			case w != "<nil>" && (got[i] == nil || string(got[i]) != w):
				t.Errorf("encode(%v)[%d] = %q, want %q", tc.args, i, got[i], w)
			}
		}
	}
	if _, err := ta.encode([]any{1.5}); err == nil {
		t.Error("a float argument was encoded")
	}
}

// A batch's statements reuse one buffer: once it is large enough, encoding
// allocates nothing.
func TestTextArgsReuseTheirBuffers(t *testing.T) {
	var ta textArgs
	args := []any{"0193a0b0-0000-7000-8000-000000000000", int64(3), nil, `{"type":"text","text":"hello"}`, int64(1733400000000)}
	if _, err := ta.encode(args); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = ta.encode(args) }); n != 0 {
		t.Errorf("encode allocates %v times a statement", n)
	}
}
