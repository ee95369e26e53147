package typed

import (
	"context"
	"encoding/json"
	"iter"
	"reflect"

	"github.com/breadai/bread/core"
)

// DefineAgent completes a with schemas derived from I and O and typed
// validation: input is decoded into an I and checked against its
// validator/v10 `validate` tags before the run starts (VALIDATION_ERROR
// naming the field), and a json output is decoded into an O and checked the
// same way. Schemas already set on a are kept.
//
// For an O of kind string the default format is text; otherwise json.
func DefineAgent[I, O any](a core.Agent) *core.Agent {
	in, out := newTypedCodec[I](), newTypedCodec[O]()
	if a.InputSchema == nil {
		a.InputSchema = SchemaFor[I]()
	}
	if a.OutputSchema == nil {
		a.OutputSchema = SchemaFor[O]()
	}
	if a.Output.Format == "" {
		if reflect.TypeFor[O]().Kind() == reflect.String {
			a.Output.Format = core.FormatText
		} else {
			a.Output.Format = core.FormatJSON
		}
	}
	a.CheckInput = func(v any) error {
		_, err := in.decode("input", v)
		return err
	}
	a.DecodeOutput = func(raw json.RawMessage) (any, error) {
		return out.decode("output", raw)
	}
	return &a
}

// DefineTool builds a tool from a typed function. The argument schema derives
// from A; the model's arguments are decoded into an A and checked against its
// validator/v10 tags before fn runs, and fn's R is the result.
func DefineTool[A, R any](name, description string, fn func(ctx context.Context, args A, tc core.ToolContext) (R, error)) core.Tool {
	codec := newTypedCodec[A]()
	return core.Tool{
		Name:        name,
		Description: description,
		InputSchema: SchemaFor[A](),
		Execute: func(ctx context.Context, raw json.RawMessage, tc core.ToolContext) (any, error) {
			args, err := codec.decode("arguments", raw)
			if err != nil {
				return nil, err
			}
			return fn(ctx, args, tc)
		},
	}
}

// DefineStreamingTool builds a tool that streams: every value fn yields is a
// tool:result:partial crumb, and the last one is the result.
func DefineStreamingTool[A, R any](name, description string, fn func(ctx context.Context, args A, tc core.ToolContext) iter.Seq2[R, error]) core.Tool {
	codec := newTypedCodec[A]()
	return core.Tool{
		Name:        name,
		Description: description,
		InputSchema: SchemaFor[A](),
		ExecuteStream: func(ctx context.Context, raw json.RawMessage, tc core.ToolContext) iter.Seq2[any, error] {
			return func(yield func(any, error) bool) {
				args, err := codec.decode("arguments", raw)
				if err != nil {
					yield(nil, err)
					return
				}
				for v, err := range fn(ctx, args, tc) {
					if !yield(v, err) || err != nil {
						return
					}
				}
			}
		},
	}
}
