package core

// globsOverlap reports whether two selector segments can match one same
// name: some string matches both. A * in either matches any run of name
// characters (as in a selector), every other byte only itself. It is what
// lets a glob selector be checked against the tools an agent can call when
// those are themselves patterns (a plugin's "fs__*"): "tool:pubx*" against
// the exact "publish" is the special case with no * on one side.
//
// A * takes only what a selector's * matches ([a-z0-9_], see globPattern)
// or the other side's *. It is a dynamic programme over the two positions, O(len(a)·len(b)) in
// time and space, so a hostile selector cannot make it blow up.
func globsOverlap(a, b string) bool {
	n, m := len(a), len(b)
	// reach[i][j]: the suffixes a[i:] and b[j:] can match a common string.
	reach := make([][]bool, n+1)
	for i := range reach {
		reach[i] = make([]bool, m+1)
	}
	reach[n][m] = true
	for i := n; i >= 0; i-- {
		for j := m; j >= 0; j-- {
			if i == n && j == m {
				continue
			}
			ok := false
			switch {
			case i < n && a[i] == '*':
				// The * of a matches nothing more, or takes b's next byte (a
				// letter, or a whole run of b's own *).
				ok = reach[i+1][j] || (j < m && starTakes(b[j]) && reach[i][j+1])
			case j < m && b[j] == '*':
				ok = reach[i][j+1] || (i < n && starTakes(a[i]) && reach[i+1][j])
			case i < n && j < m:
				ok = a[i] == b[j] && reach[i+1][j+1]
			}
			reach[i][j] = ok
		}
	}
	return reach[0][0]
}

// starTakes reports whether a selector's * can match c: a name character,
// or another * (whose run can be chosen to match).
func starTakes(c byte) bool {
	return c == '*' || c == '_' || ('a' <= c && c <= 'z') || ('0' <= c && c <= '9')
}
