package storetest

import (
	"reflect"
	"testing"

	"github.com/breadai/bread/core"
)

// TestFeaturesCoverEveryCapability: Features has one field per
// core.StoreCapability, and featureFields ties each to its own.
func TestFeaturesCoverEveryCapability(t *testing.T) {
	var all core.StoreCapability
	for _, c := range core.StoreCapabilities() {
		all |= c
	}
	var tied core.StoreCapability
	for _, ff := range featureFields {
		if tied&ff.cap != 0 {
			t.Errorf("Features.%s ties %v a second time", ff.field, ff.cap)
		}
		tied |= ff.cap
		var f Features
		reflect.ValueOf(&f).Elem().FieldByName(ff.field).SetBool(true)
		if got := f.claims(); got != ff.cap {
			t.Errorf("Features{%s: true} claims %v, want %v", ff.field, got, ff.cap)
		}
	}
	if tied != all {
		t.Errorf("Features ties %v, want every capability %v", tied, all)
	}
	if n := reflect.TypeFor[Features]().NumField(); n != len(featureFields) {
		t.Errorf("Features has %d fields, featureFields %d", n, len(featureFields))
	}
}
