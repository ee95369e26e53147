package agui

import (
	"bytes"
	"encoding/json"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// stateDiff returns the RFC 6902 JSON Patch that turns the document from
// into to, for a STATE_DELTA: a client holding from applies it and holds
// to. Objects are diffed key by key (removals, then changes, then
// additions, each in key order), arrays index by index over their common
// length and then grown at the end or shrunk from it, anything else
// replaced; the whole document is replaced (path "") when its type
// changes. Numbers compare by value, so a store that re-encodes 1e2 as 100
// (PostgreSQL's jsonb, MySQL's JSON) changes nothing. An empty patch means
// the documents are equal. The operations are not the shortest possible
// (an array's first element removed replaces every later one); they are
// always right, which a test holds by applying them.
func stateDiff(from, to json.RawMessage) (json.RawMessage, error) {
	a, err := decodeNumbers(from)
	if err != nil {
		return nil, err
	}
	b, err := decodeNumbers(to)
	if err != nil {
		return nil, err
	}
	ops := diffValue(nil, "", a, b)
	if len(ops) == 0 {
		return json.RawMessage("[]"), nil
	}
	return json.Marshal(ops)
}

// patchOp is one operation; Value is always written for add and replace
// (a null is a value there) and never for remove.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value *any   `json:"value,omitempty"`
}

func decodeNumbers(doc json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

func diffValue(ops []patchOp, path string, a, b any) []patchOp {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			return diffObject(ops, path, av, bv)
		}
	case []any:
		if bv, ok := b.([]any); ok {
			return diffArray(ops, path, av, bv)
		}
	}
	if equalJSON(a, b) {
		return ops
	}
	return append(ops, patchOp{Op: "replace", Path: path, Value: &b})
}

func diffObject(ops []patchOp, path string, a, b map[string]any) []patchOp {
	keys := func(m map[string]any) []string {
		out := make([]string, 0, len(m))
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	for _, k := range keys(a) {
		if _, ok := b[k]; !ok {
			ops = append(ops, patchOp{Op: "remove", Path: path + "/" + pointerEscaper.Replace(k)})
		}
	}
	for _, k := range keys(b) {
		p := path + "/" + pointerEscaper.Replace(k)
		if av, ok := a[k]; ok {
			ops = diffValue(ops, p, av, b[k])
			continue
		}
		v := b[k]
		ops = append(ops, patchOp{Op: "add", Path: p, Value: &v})
	}
	return ops
}

func diffArray(ops []patchOp, path string, a, b []any) []patchOp {
	common := min(len(a), len(b))
	for i := range common {
		ops = diffValue(ops, path+"/"+strconv.Itoa(i), a[i], b[i])
	}
	for i := common; i < len(b); i++ {
		v := b[i]
		ops = append(ops, patchOp{Op: "add", Path: path + "/" + strconv.Itoa(i), Value: &v})
	}
	for i := len(a) - 1; i >= common; i-- {
		ops = append(ops, patchOp{Op: "remove", Path: path + "/" + strconv.Itoa(i)})
	}
	return ops
}

// equalJSON compares two decoded documents, numbers by value.
func equalJSON(a, b any) bool {
	switch av := a.(type) {
	case json.Number:
		bv, ok := b.(json.Number)
		if !ok {
			return false
		}
		if av == bv {
			return true
		}
		x, okx := new(big.Rat).SetString(string(av))
		y, oky := new(big.Rat).SetString(string(bv))
		return okx && oky && x.Cmp(y) == 0
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, v := range av {
			w, ok := bv[k]
			if !ok || !equalJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !equalJSON(av[i], bv[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
