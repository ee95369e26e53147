package core

import "regexp"

var (
	namePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	idPattern   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)
)

// ValidName reports whether s can name a tool, skill, task or plugin:
// lowercase snake_case starting with a letter, at most 64 bytes. The rule
// keeps names safe as model-facing tool names (tool_<name>, plugin_<p>_<name>)
// and as permission selector segments.
func ValidName(s string) bool { return namePattern.MatchString(s) }

// ValidID reports whether s can identify an agent or a pipeline: letters,
// digits, '_', '-' and '.', starting with a letter or digit, at most 128
// bytes, so ids are safe in URLs and file paths.
func ValidID(s string) bool { return idPattern.MatchString(s) }

// ValidateName returns INVALID_NAME naming what kind of thing is misnamed.
func ValidateName(kind, name string) error {
	if ValidName(name) {
		return nil
	}
	return &BreadError{
		Code:    CodeInvalidName,
		Message: kind + " name " + quoteTruncated(name) + " must be lowercase snake_case (a-z, 0-9, _), start with a letter and be at most 64 bytes",
		Context: map[string]any{"kind": kind, "value": name},
	}
}

// ValidateID returns INVALID_NAME for a malformed agent or pipeline id.
func ValidateID(kind, id string) error {
	if ValidID(id) {
		return nil
	}
	return &BreadError{
		Code:    CodeInvalidName,
		Message: kind + " id " + quoteTruncated(id) + " must use letters, digits, '_', '-' or '.', start with a letter or digit and be at most 128 bytes",
		Context: map[string]any{"kind": kind, "value": id},
	}
}
