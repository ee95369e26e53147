package project

import (
	"strconv"
	"strings"
	"unicode"
)

func itoa(i int) string { return strconv.Itoa(i) }

func splitLines(s string) []string { return strings.Split(s, "\n") }

// containsWord reports whether line holds value not as part of a longer
// identifier.
func containsWord(line, value string) bool {
	for i := 0; ; {
		j := strings.Index(line[i:], value)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(value)
		before := start == 0 || !isIdent(rune(line[start-1]))
		after := end == len(line) || !isIdent(rune(line[end]))
		if before && after {
			return true
		}
		i = start + 1
	}
}

func isIdent(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' }
