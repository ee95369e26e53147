package core

import (
	"encoding/json"
	"unicode/utf8"
)

// Values cross the ports as Go values on a live run and as raw JSON once
// read back from a store or a bus (a crumb's Output, a tool's Result). These
// helpers give one answer for both forms, so every adapter renders a value
// alike whichever way it came.

// AsJSON is v's JSON encoding; raw JSON (a json.RawMessage, or a []byte
// holding valid JSON) passes through as it is.
func AsJSON(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case json.RawMessage:
		return x, nil
	case []byte:
		if json.Valid(x) {
			return x, nil
		}
	}
	return json.Marshal(v)
}

// JSONText is v as text for a reader (a model's prompt, a protocol's text
// field): a string as it is, raw JSON holding a string as that string,
// other raw JSON as it is, anything else as its JSON encoding.
func JSONText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.RawMessage:
		if s, ok := plainJSONString(x); ok {
			return s, nil
		}
		var s string
		if json.Unmarshal(x, &s) == nil {
			return s, nil
		}
		return string(x), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// plainJSONString decodes raw when it is a JSON string with nothing to
// unescape or replace (a run's input, as often as not): what json.Unmarshal
// gives, without its reflection and allocations.
func plainJSONString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return "", false
		}
	}
	return string(body), true
}

// OptionalJSON is v as JSON for a field that is left out when empty: nil
// for nil, an empty or null raw value, a value that encodes as null, or one
// that does not encode.
func OptionalJSON(v any) json.RawMessage {
	switch x := v.(type) {
	case nil:
		return nil
	case json.RawMessage:
		if len(x) == 0 || string(x) == "null" {
			return nil
		}
		return x
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return nil
	}
	return b
}
