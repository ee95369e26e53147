package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/breadai/bread/core"
	jsv "github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// compiledSchema validates values against a JSON Schema.
type compiledSchema struct{ s *jsv.Schema }

// compileSchema parses and compiles a JSON Schema document; nil raw means no
// schema. A broken schema is INVALID_CONFIG naming what it belongs to.
func compileSchema(what string, raw json.RawMessage) (*compiledSchema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	doc, err := jsv.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: what + " is not valid JSON: " + err.Error(), Cause: err}
	}
	c := jsv.NewCompiler()
	const url = "mem:///schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: what + " cannot be loaded: " + err.Error(), Cause: err}
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: what + " is not a valid JSON Schema: " + err.Error(), Cause: err}
	}
	return &compiledSchema{s: s}, nil
}

// validate checks v (any JSON-marshalable value) and returns VALIDATION_ERROR
// naming the first offending field.
func (cs *compiledSchema) validate(what string, v any) error {
	if cs == nil {
		return nil
	}
	doc, err := toJSONDoc(v)
	if err != nil {
		return &core.BreadError{Code: core.CodeValidationError, Message: what + " is not JSON: " + err.Error(), Cause: err}
	}
	err = cs.s.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsv.ValidationError
	if !errors.As(err, &ve) {
		return &core.BreadError{Code: core.CodeValidationError, Message: what + " is invalid: " + err.Error(), Cause: err}
	}
	leaf := firstLeaf(ve)
	field := "/" + strings.Join(leaf.InstanceLocation, "/")
	return &core.BreadError{
		Code:    core.CodeValidationError,
		Message: fmt.Sprintf("%s is invalid at %s: %s", what, field, leafMessage(leaf)),
		Context: map[string]any{"field": field},
		Cause:   err,
	}
}

func firstLeaf(ve *jsv.ValidationError) *jsv.ValidationError {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	return ve
}

// leafMessage prints an error kind in English without the location and
// schema URL that ValidationError.Error would add.
func leafMessage(ve *jsv.ValidationError) string {
	return ve.ErrorKind.LocalizedString(message.NewPrinter(language.English))
}

// toJSONDoc turns a Go value into the generic form the validator reads
// (maps, slices, json.Number, ...), keeping number precision.
func toJSONDoc(v any) (any, error) {
	var raw []byte
	switch x := v.(type) {
	case json.RawMessage:
		raw = x
	case []byte:
		raw = x
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	return jsv.UnmarshalJSON(bytes.NewReader(raw))
}

// CheckSchema compiles raw as the engine will (nil raw is no schema) and
// returns INVALID_CONFIG naming what when it does not compile. Loaders call
// it to place a broken schema at its file and line before the engine is
// built.
func CheckSchema(what string, raw json.RawMessage) error {
	_, err := compileSchema(what, raw)
	return err
}
