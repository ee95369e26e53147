package project

import (
	"bytes"
	"regexp"
)

var varPattern = regexp.MustCompile(`\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expand replaces ${VAR} and ${VAR:-default} with values from lookup;
// $${ stays a literal ${. An unset variable without a default is an error at
// its line.
func expand(file string, src []byte, lookup func(string) (string, bool)) ([]byte, error) {
	var firstErr error
	out := varPattern.ReplaceAllFunc(src, func(m []byte) []byte {
		if string(m) == "$${" {
			return []byte("${")
		}
		sub := varPattern.FindSubmatch(m)
		name := string(sub[1])
		if v, ok := lookup(name); ok {
			return []byte(v)
		}
		if sub[2] != nil {
			return sub[3]
		}
		if firstErr == nil {
			line := 1 + bytes.Count(src[:bytes.Index(src, m)], []byte("\n"))
			firstErr = errorf(file, line, "environment variable %s is not set (use ${%s:-default} for a default)", name, name)
		}
		return m
	})
	return out, firstErr
}
