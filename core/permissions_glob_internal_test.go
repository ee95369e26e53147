package core

import "testing"

func TestGlobsOverlap(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"pubx*", "publish", false},
		{"pub*", "publish", true},
		{"*lish", "publish", true},
		{"fs__re*", "fs__*", true},
		{"git__*", "fs__*", false},
		{"*a*", "*b*", true},
		{"a*", "*b", true},
		{"a*c", "b*", false},
		{"*", "", true},
		{"", "", true},
		{"x", "", false},
		{"p*h", "pub-lish", false}, // a selector's * takes no '-'
		{"**", "a", true},
	} {
		if got := globsOverlap(tt.a, tt.b); got != tt.want {
			t.Errorf("globsOverlap(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := globsOverlap(tt.b, tt.a); got != tt.want {
			t.Errorf("globsOverlap(%q, %q) = %v, want %v (not symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}
