package bunstore

import (
	"encoding/json"
	"unicode/utf8"
)

// rawJSON checks a caller's raw JSON before it is stored: empty is NULL,
// anything else must be valid JSON, so a bad payload is refused before any
// row is written rather than stored and found unreadable later.
func (e errs) rawJSON(what string, raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	if !json.Valid(raw) {
		return nil, e.validation("%s is not valid JSON", what)
	}
	if !utf8.Valid(raw) {
		// encoding/json accepts invalid UTF-8 inside strings, but a
		// database text column cannot keep it byte for byte.
		return nil, e.validation("%s is not valid UTF-8", what)
	}
	return raw, nil
}

func (e errs) marshalJSON(what string, v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, e.validation("%s does not encode as JSON: %v", what, err)
	}
	return b, nil
}

func (e errs) marshalTags(tags map[string]string) (string, error) {
	if tags == nil {
		return "{}", nil
	}
	b, err := json.Marshal(tags)
	if err != nil {
		return "", e.validation("tags do not encode as JSON: %v", err)
	}
	return string(b), nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
