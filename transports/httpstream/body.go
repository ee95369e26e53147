package httpstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"

	"github.com/breadai/bread/core"
)

// runBody is the body of POST /agents/{id}/run.
type runBody struct {
	Input   json.RawMessage     `json:"input"`
	Session core.SessionOptions `json:"session"`
	Skill   string              `json:"skill"`
	Detach  bool                `json:"detach"`
	// Background asks for a 202 at once (see runInBackground); Webhook is
	// then POSTed the run's record when it ends.
	Background bool   `json:"background"`
	Webhook    string `json:"webhook"`
}

// plainInputPrefix opens the run body most clients post.
const plainInputPrefix = `{"input":"`

// takePlainInput takes data apart as json.Unmarshal would when it is the
// body most clients post, {"input":"…"} exactly, the input a string of
// printable ASCII without a quote or a backslash, and reports whether it
// did; any other body (spaces, other fields, escapes, non-ASCII) is left to
// json.Unmarshal. Input keeps data's bytes, which the caller owns, where
// json.Unmarshal would copy them; json.Unmarshal was 1.5% of the CPU of
// bench's BenchmarkServerCPU process (issue 32).
func (b *runBody) takePlainInput(data []byte) bool {
	n := len(data)
	if n < len(plainInputPrefix)+2 || string(data[:len(plainInputPrefix)]) != plainInputPrefix || data[n-2] != '"' || data[n-1] != '}' {
		return false
	}
	for _, c := range data[len(plainInputPrefix) : n-2] {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	b.Input = json.RawMessage(data[len(plainInputPrefix)-1 : n-1])
	return true
}

// pipelineBody is the body of POST /pipelines/{id}/run.
type pipelineBody struct {
	Input      json.RawMessage `json:"input"`
	Detach     bool            `json:"detach"`
	Background bool            `json:"background"`
	Webhook    string          `json:"webhook"`
}

// resumeBody is the body of POST /resume/{checkpointId}.
type resumeBody struct {
	Response json.RawMessage `json:"response"`
	Detach   bool            `json:"detach"`
}

// emptyObject is the input of a run whose request names none, as in the
// original.
var emptyObject = json.RawMessage(`{}`)

func inputOrEmpty(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return emptyObject
	}
	return raw
}

// decodeBody reads a JSON object into v. An empty body leaves v as it is;
// anything unreadable is BAD_REQUEST (BODY_TOO_LARGE past the server's cap).
func decodeBody(r *http.Request, v any) error {
	data, err := readBody(r)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &core.BreadError{Code: core.CodeBodyTooLarge, Message: "request body too large", Cause: err}
		}
		return &core.BreadError{Code: core.CodeBadRequest, Message: "the request body could not be read", Cause: err}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if rb, ok := v.(*runBody); ok && rb.takePlainInput(data) {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return &core.BreadError{Code: core.CodeBadRequest, Message: BodyProblem(err), Cause: err}
	}
	return nil
}

// readBody reads r's body whole: into one buffer of the declared length
// when there is a modest one (the server has read and counted a body by
// then), instead of io.ReadAll's 512 bytes grown by doubling; a body longer
// than declared is still read to its end.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength <= 0 || r.ContentLength >= 1<<20 {
		return io.ReadAll(r.Body)
	}
	data := make([]byte, r.ContentLength+1) // +1: the read that finds the end
	n, err := io.ReadFull(r.Body, data)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return data[:n], nil
	case err != nil:
		return data[:n], err
	}
	rest, err := io.ReadAll(r.Body)
	return append(data, rest...), err
}

// BodyProblem says what is wrong with a JSON body in the client's terms: JSON
// types and field paths, never the server's Go type names.
func BodyProblem(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("the request body is not valid JSON (at byte %d)", syntax.Offset)
	case errors.As(err, &typ) && typ.Field == "":
		return "the request body must be a JSON object, not " + article(typ.Value)
	case errors.As(err, &typ):
		return fmt.Sprintf("%s must be %s, not %s", typ.Field, article(jsonKind(typ.Type)), article(typ.Value))
	}
	return "the request body is not a valid JSON object"
}

// jsonKind names the JSON type a Go type decodes from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "number"
	}
	return "another JSON value"
}

// article puts "a" or "an" before a JSON type's name.
func article(kind string) string {
	switch kind {
	case "array", "object":
		return "an " + kind
	case "another JSON value":
		return kind
	}
	return "a " + kind
}
