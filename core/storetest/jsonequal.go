package storetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
)

// JSON comparison. Stores may normalise JSON they keep as a value (drop
// whitespace, turn an empty slice into null or an omitted field), so most
// cases compare semantically: same members whatever their order, numbers by
// their literal text so a store that loses precision (12345678901234567890
// through a float64) still fails. Where the contract promises bytes, cases use
// assertCompactEqual or compare bytes directly.

// jsonEqual reports whether a and b encode the same JSON value. Invalid JSON
// on either side is never equal.
func jsonEqual(a, b []byte) bool {
	va, err := decodeJSON(a)
	if err != nil {
		return false
	}
	vb, err := decodeJSON(b)
	if err != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// toJSON returns v's JSON: itself when v already is raw JSON.
func toJSON(t *testing.T, v any) []byte {
	t.Helper()
	switch raw := v.(type) {
	case json.RawMessage:
		return raw
	case []byte:
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %T: %v", v, err)
	}
	return b
}

// assertJSONEqual fails when want and got (Go values or raw JSON) do not
// encode the same JSON value.
func assertJSONEqual(t *testing.T, what string, want, got any) {
	t.Helper()
	w, g := toJSON(t, want), toJSON(t, got)
	if !jsonEqual(w, g) {
		t.Errorf("%s differs:\nwant %s\n got %s", what, w, g)
	}
}

// assertCompactEqual fails unless want and got are the same bytes once
// insignificant whitespace is removed: key order, number literals and string
// escapes must all survive.
func assertCompactEqual(t *testing.T, what string, want, got []byte) {
	t.Helper()
	w, g := compact(want), compact(got)
	if !bytes.Equal(w, g) {
		t.Errorf("%s is not kept byte for byte:\nwant %s\n got %s", what, w, g)
	}
}

// compact strips insignificant whitespace; invalid JSON is returned as is so
// the comparison still reports it.
func compact(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b
	}
	return buf.Bytes()
}

// jsonUnmarshal is json.Unmarshal, named here so cases read as prose.
func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
