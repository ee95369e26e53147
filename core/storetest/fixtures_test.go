package storetest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/breadai/bread/core"
)

// The round-trip case is only as strong as its fixtures: every crumb type
// must be present with every field set, and a store that keeps crumbs as JSON
// must be able to pass it.

func TestFullCrumbsCoverEveryTypeAndField(t *testing.T) {
	crumbs := fullCrumbs("r", "s")
	if len(crumbs) != len(core.CrumbTypes()) {
		t.Errorf("fullCrumbs has %d types, core has %d", len(crumbs), len(core.CrumbTypes()))
	}
	seen := map[int64]string{}
	for _, typ := range core.CrumbTypes() {
		c, ok := crumbs[typ]
		if !ok {
			t.Errorf("no fixture for %q", typ)
			continue
		}
		for _, field := range zeroFields(reflect.ValueOf(c).Elem(), "") {
			t.Errorf("%s: field %s is not set", typ, field)
		}
		if prev, dup := seen[c.Base().Seq]; dup {
			t.Errorf("%s and %s share seq %d", prev, typ, c.Base().Seq)
		}
		seen[c.Base().Seq] = typ
	}
}

// zeroFields lists the exported fields of a struct, including those of
// embedded structs, that hold their zero value.
func zeroFields(v reflect.Value, prefix string) []string {
	var out []string
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, zeroFields(v.Field(i), prefix+f.Name+".")...)
			continue
		}
		if v.Field(i).IsZero() {
			out = append(out, prefix+f.Name)
		}
	}
	return out
}

func TestFullCrumbsSurviveTheWireForm(t *testing.T) {
	for typ, c := range fullCrumbs("r", "s") {
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("%s: encode: %v", typ, err)
		}
		back, err := core.DecodeCrumb(want)
		if err != nil {
			t.Fatalf("%s: decode: %v", typ, err)
		}
		got, err := json.Marshal(back)
		if err != nil {
			t.Fatalf("%s: re-encode: %v", typ, err)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s does not survive its own wire form:\nwant %s\n got %s", typ, want, got)
		}
		if !bytes.Contains(want, []byte("12345678901234567890")) && hasPayload(c) {
			t.Errorf("%s: the payload lost its big integer: %s", typ, want)
		}
	}
}

// hasPayload reports whether a crumb type carries a free-form JSON field.
func hasPayload(c core.Crumb) bool {
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		if v.Type().Field(i).Type.Kind() == reflect.Interface {
			return true
		}
	}
	return false
}

func TestFullCheckpointIsComplete(t *testing.T) {
	cp := fullCheckpoint("cp", "s")
	for _, field := range zeroFields(reflect.ValueOf(cp), "") {
		if field != "Pending" { // a pipeline checkpoint has no pending delegations
			t.Errorf("CheckpointRecord.%s is not set", field)
		}
	}
	for _, field := range zeroFields(reflect.ValueOf(*cp.Parent), "Parent.") {
		switch field {
		case "Parent.CheckpointID", "Parent.ToolCallID": // supervisor fields: set on Parent.Outer
		default:
			t.Errorf("%s is not set", field)
		}
	}
}
