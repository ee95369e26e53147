package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/go-playground/validator/v10"
	"github.com/invopop/jsonschema"
	jsv "github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// SchemaFor derives the JSON Schema of T, inlined (no $ref, no $schema) so
// every model provider accepts it. Fields follow encoding/json tags: a field
// without omitempty is required, and no other properties are allowed.
// Descriptions come from `jsonschema:"description=..."` tags.
func SchemaFor[T any]() json.RawMessage {
	var zero T
	return schemaOf(reflect.TypeOf(&zero).Elem())
}

func schemaOf(t reflect.Type) json.RawMessage {
	r := &jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, Anonymous: true}
	s := r.ReflectFromType(t)
	s.Version = ""
	s.ID = ""
	b, err := json.Marshal(s)
	if err != nil {
		// The reflector only yields what it can marshal; this is a bug.
		panic(fmt.Sprintf("bread: schema of %s: %v", t, err))
	}
	return b
}

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
		return nil, &BreadError{Code: CodeInvalidConfig, Message: what + " is not valid JSON: " + err.Error(), Cause: err}
	}
	c := jsv.NewCompiler()
	const url = "mem:///schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, &BreadError{Code: CodeInvalidConfig, Message: what + " cannot be loaded: " + err.Error(), Cause: err}
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, &BreadError{Code: CodeInvalidConfig, Message: what + " is not a valid JSON Schema: " + err.Error(), Cause: err}
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
		return &BreadError{Code: CodeValidationError, Message: what + " is not JSON: " + err.Error(), Cause: err}
	}
	err = cs.s.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsv.ValidationError
	if !errors.As(err, &ve) {
		return &BreadError{Code: CodeValidationError, Message: what + " is invalid: " + err.Error(), Cause: err}
	}
	leaf := firstLeaf(ve)
	field := "/" + strings.Join(leaf.InstanceLocation, "/")
	return &BreadError{
		Code:    CodeValidationError,
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

// typedCodec decodes a JSON value into T and checks its validator/v10 tags.
type typedCodec[T any] struct {
	v *validator.Validate
}

func newTypedCodec[T any]() typedCodec[T] {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		if name == "" {
			return f.Name
		}
		return name
	})
	return typedCodec[T]{v: v}
}

// decode converts v (a T, a JSON document, or any value that marshals to
// one) into T and validates it. Unknown fields are rejected.
func (c typedCodec[T]) decode(what string, v any) (T, error) {
	var out T
	if t, ok := v.(T); ok {
		out = t
	} else {
		raw, err := asJSON(v)
		if err != nil {
			return out, &BreadError{Code: CodeValidationError, Message: what + " is not JSON: " + err.Error(), Cause: err}
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&out); err != nil {
			return out, &BreadError{Code: CodeValidationError, Message: what + " does not match its type: " + err.Error(), Cause: err}
		}
	}
	if err := c.check(what, out); err != nil {
		return out, err
	}
	return out, nil
}

func (c typedCodec[T]) check(what string, v T) error {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return nil
	}
	err := c.v.Struct(rv.Interface())
	var verrs validator.ValidationErrors
	if err == nil || !errors.As(err, &verrs) || len(verrs) == 0 {
		return nil
	}
	fe := verrs[0]
	field := fe.Namespace()
	if _, rest, ok := strings.Cut(field, "."); ok {
		field = rest
	}
	msg := fmt.Sprintf("%s is invalid at %s: fails %q", what, field, fe.Tag())
	if fe.Param() != "" {
		msg = fmt.Sprintf("%s is invalid at %s: fails %q=%s", what, field, fe.Tag(), fe.Param())
	}
	return &BreadError{Code: CodeValidationError, Message: msg, Context: map[string]any{"field": field}, Cause: err}
}

// asJSON returns v's JSON encoding; raw JSON passes through.
func asJSON(v any) (json.RawMessage, error) {
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
