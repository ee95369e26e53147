package memory

import (
	"encoding/json"
	"slices"
)

// Copy helpers shared by the record kinds. nil stays nil, so a record reads
// back with the same shape it was written with.

func cloneRaws(raws []json.RawMessage) []json.RawMessage {
	if raws == nil {
		return nil
	}
	out := make([]json.RawMessage, len(raws))
	for i, r := range raws {
		out[i] = slices.Clone(r)
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}
