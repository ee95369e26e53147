package nats

import "encoding/hex"

// runToken is a run id as one subject token and key-value key: the id
// itself when it is made of letters, digits, '-' and '_' only (every id
// bread mints), otherwise "=" and its hex encoding, since '.', '*', '>' and
// whitespace would change the subject's meaning. Plain ids never start
// with '=', so the mapping is one to one.
func runToken(runID string) string {
	for i := 0; i < len(runID); i++ {
		c := runID[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return "=" + hex.EncodeToString([]byte(runID))
		}
	}
	return runID
}

// validToken reports whether s may be a subject token or stream name part
// of this package's options: no empty tokens, wildcards or whitespace.
func validSubjectPrefix(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	prevDot := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			if prevDot {
				return false
			}
			prevDot = true
			continue
		case c == '*' || c == '>' || c <= ' ' || c == 0x7f:
			return false
		}
		prevDot = false
	}
	return true
}
