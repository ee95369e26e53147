package typed

import (
	"encoding/json"

	"github.com/breadai/bread/core"
)

// DefineTask completes t with schemas derived from A and O and typed
// validation of the arguments and the answer.
func DefineTask[A, O any](t core.Task) *core.Task {
	in, out := newTypedCodec[A](), newTypedCodec[O]()
	if t.InputSchema == nil {
		t.InputSchema = SchemaFor[A]()
	}
	if t.OutputSchema == nil {
		t.OutputSchema = SchemaFor[O]()
	}
	t.CheckInput = func(v any) error { _, err := in.decode("task arguments", v); return err }
	t.DecodeOutput = func(raw json.RawMessage) (any, error) { return out.decode("task output", raw) }
	return &t
}
