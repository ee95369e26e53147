package typed

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/breadai/bread/core"
	"github.com/go-playground/validator/v10"
	"github.com/invopop/jsonschema"
)

// SchemaFor derives the JSON Schema of T, inlined (no $ref, no $schema) so
// every model provider accepts it. Fields follow encoding/json tags: a field
// without omitempty is required, and no other properties are allowed.
// Descriptions come from `jsonschema:"description=..."` tags.
func SchemaFor[T any]() json.RawMessage {
	var zero T
	return schemaOf(reflect.TypeOf(&zero).Elem())
}

// schemas memoises schemaOf by type. Reflecting a schema cost more than
// everything else in building a tool, and the engine builds its built-in
// tools again for every run. A type's schema never changes, so the memo
// changes no answer; each caller gets its own copy of the bytes.
var schemas sync.Map // reflect.Type -> json.RawMessage

func schemaOf(t reflect.Type) json.RawMessage {
	if s, ok := schemas.Load(t); ok {
		return bytes.Clone(s.(json.RawMessage))
	}
	s, _ := schemas.LoadOrStore(t, reflectSchema(t))
	return bytes.Clone(s.(json.RawMessage))
}

func reflectSchema(t reflect.Type) json.RawMessage {
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

// typedCodec decodes a JSON value into T and checks its validator/v10 tags.
type typedCodec[T any] struct {
	v *validator.Validate
}

func newTypedCodec[T any]() typedCodec[T] {
	return typedCodec[T]{v: sharedValidator()}
}

// sharedValidator is the one validator every codec uses. validator/v10
// means a Validate to be shared: it is safe for concurrent use and caches
// what it learns of each struct type, where a new one per tool rebuilt its
// tables of rules on every run that built the tool.
var sharedValidator = sync.OnceValue(func() *validator.Validate {
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
	return v
})

// decode converts v (a T, a JSON document, or any value that marshals to
// one) into T and validates it. Unknown fields are rejected.
func (c typedCodec[T]) decode(what string, v any) (T, error) {
	var out T
	if t, ok := v.(T); ok {
		out = t
	} else {
		raw, err := core.AsJSON(v)
		if err != nil {
			return out, &core.BreadError{Code: core.CodeValidationError, Message: what + " is not JSON: " + err.Error(), Cause: err}
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&out); err != nil {
			return out, &core.BreadError{Code: core.CodeValidationError, Message: what + " does not match its type: " + err.Error(), Cause: err}
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
	return &core.BreadError{Code: core.CodeValidationError, Message: msg, Context: map[string]any{"field": field}, Cause: err}
}
