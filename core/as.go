package core

import "reflect"

// As finds in v, or in what v wraps, a value of the type target points to
// (an optional capability such as *RunStore, or an adapter's own type such
// as **sqlite.Store), sets *target to it and reports whether it found one.
// It is how a wrapper keeps the capabilities of what it wraps without
// implementing each of them, the way errors.As sees through wrapped errors:
//
//	// A store that counts calls: it implements BreadStore (counting) and
//	// As, and keeps every optional part of the store it wraps.
//	func (c *counting) As(target any) bool { return core.As(c.BreadStore, target) }
//
// As looks at v itself first; when v is not of the type and has a method
// As(any) bool, that method decides. A nil v, a nil target or a target that
// is not a non-nil pointer is false. The portable types (Storage, Bus,
// Queue, Blobs) resolve every capability of their adapter through As, once,
// when they are built; nothing else in bread type-asserts a capability.
func As(v, target any) bool {
	if v == nil || target == nil {
		return false
	}
	ptr := reflect.ValueOf(target)
	if ptr.Kind() != reflect.Pointer || ptr.IsNil() {
		return false
	}
	want := ptr.Type().Elem()
	if reflect.TypeOf(v).AssignableTo(want) {
		ptr.Elem().Set(reflect.ValueOf(v))
		return true
	}
	if a, ok := v.(aser); ok {
		return a.As(target)
	}
	return false
}

// aser is implemented by wrappers that keep what they wrap reachable.
type aser interface {
	As(target any) bool
}

// capabilityOf returns v's capability T: v itself when it implements T,
// else what v's As method finds. It is As without reflection for the
// common case, used by the portable types when they are built.
func capabilityOf[T any](v any) (T, bool) {
	if t, ok := v.(T); ok {
		return t, true
	}
	var t T
	if a, ok := v.(aser); ok && a.As(&t) && any(t) != nil {
		return t, true
	}
	var zero T
	return zero, false
}
