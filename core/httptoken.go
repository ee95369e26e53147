package core

import "strings"

// ValidHTTPToken reports whether s is an RFC 9110 token: what a header
// name or an authentication scheme must be. The auth strategies check
// their configured header names and schemes with it.
func ValidHTTPToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
