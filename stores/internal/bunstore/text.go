package bunstore

import "strings"

// checkText refuses a NUL byte in any of values. bun writes values into the
// SQL text, where a NUL cannot be represented, so such a value would
// otherwise fail as an obscure syntax error instead of as bad input.
func (e errs) checkText(what string, values ...string) error {
	for _, v := range values {
		if strings.IndexByte(v, 0) >= 0 {
			return e.validation("%s contains a NUL byte", what)
		}
	}
	return nil
}

func (e errs) checkTags(tags map[string]string) error {
	for k, v := range tags {
		if err := e.checkText("a session tag", k, v); err != nil {
			return err
		}
	}
	return nil
}

// hasNUL reports whether any of values holds a NUL byte. A lookup by such a
// key cannot match a stored row, so readers answer it as not found.
func hasNUL(values ...string) bool {
	for _, v := range values {
		if strings.IndexByte(v, 0) >= 0 {
			return true
		}
	}
	return false
}

func tagsHaveNUL(tags map[string]string) bool {
	for k, v := range tags {
		if hasNUL(k, v) {
			return true
		}
	}
	return false
}

// likePattern makes a LIKE pattern matching query anywhere, with LIKE's own
// wildcards in query taken literally.
func likePattern(query string) string {
	return "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(query) + "%"
}

func quote(s string) string { return `"` + s + `"` }
