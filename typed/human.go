package typed

import "github.com/breadai/bread/core"

// HumanToolFor returns a human tool whose answer is a T.
func HumanToolFor[T any](name string) core.HumanToolDef {
	return core.HumanToolDef{Name: name, Schema: SchemaFor[T]()}
}
