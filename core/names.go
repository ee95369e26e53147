package core

import "regexp"

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// ValidName reports whether s can name an agent, tool, task, skill or plugin:
// 1 to 64 letters, digits, '-' or '_', starting with a letter or digit. The
// rule keeps names safe as model-facing tool names and as permission
// selector segments.
func ValidName(s string) bool { return namePattern.MatchString(s) }

// ValidateName returns INVALID_NAME naming what kind of thing is misnamed.
func ValidateName(kind, name string) error {
	if ValidName(name) {
		return nil
	}
	return Errorf(CodeInvalidName, "invalid %s name %s: use 1-64 letters, digits, '-' or '_', starting with a letter or digit", kind, quoteTruncated(name))
}
