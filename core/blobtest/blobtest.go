package blobtest

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/breadai/bread/core"
)

// Features declares what a store claims beyond the two methods of
// core.BlobStore. The zero value claims nothing optional.
type Features struct {
	// Delete: the store implements core.BlobDeleter.
	Delete bool
	// MaxBytes is the cap on one blob the harness configured, 0 for none.
	// With a cap, the large-object case writes MaxBytes bytes instead of
	// 32 MiB, and a Put of one byte more must fail with BODY_TOO_LARGE.
	MaxBytes int64
}

// Harness returns a fresh, empty store for one case and registers its
// teardown with t.Cleanup. Run calls it once per case, never concurrently.
type Harness func(t *testing.T) core.BlobStore

// LargeBytes is the size of the large-object case when Features.MaxBytes
// does not lower it.
const LargeBytes = 32 << 20

type feature int

const (
	needsNothing feature = iota
	needsDelete
	needsMaxBytes
)

type testCase struct {
	name  string
	needs feature
	run   func(t *testing.T, f Features, s core.BlobStore)
}

type group struct {
	name  string
	cases []testCase
}

// Run runs every conformance case against stores made by newStore, each
// case as its own subtest on its own fresh store:
//
//	func TestConformance(t *testing.T) {
//		blobtest.Run(t, blobtest.Features{Delete: true}, func(t *testing.T) core.BlobStore {
//			s, err := myblobs.Open(t.TempDir()) // fresh and empty
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// A claimed capability the store lacks fails the suite; a case needing one
// it does not claim is skipped with the reason. Nothing is timed: the
// large-object case checks that a store streams a reader it cannot seek or
// size, not how fast. The cases that look for leaked file descriptors and
// goroutines assume no other test runs in parallel with the suite.
func Run(t *testing.T, f Features, newStore Harness) {
	t.Helper()
	t.Run("Features", func(t *testing.T) { checkClaims(t, f, newStore(t)) })
	for _, g := range groups() {
		t.Run(g.name, func(t *testing.T) {
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					if reason := f.missing(c.needs); reason != "" {
						t.Skip(reason)
					}
					s := newStore(t)
					guard(t, "the case", func() { c.run(t, f, s) })
				})
			}
		})
	}
}

func groups() []group {
	return []group{
		{"RoundTrip", roundTripCases()},
		{"Keys", keyCases()},
		{"Concurrency", concurrencyCases()},
		{"Context", contextCases()},
		{"Readers", readerCases()},
		{"Delete", deleteCases()},
	}
}

func (f Features) missing(n feature) string {
	switch {
	case n == needsDelete && !f.Delete:
		return "store does not claim Features.Delete (core.BlobDeleter)"
	case n == needsMaxBytes && f.MaxBytes <= 0:
		return "store does not claim Features.MaxBytes (a cap on one blob)"
	}
	return ""
}

// largeSize is how many bytes the large-object case writes.
func (f Features) largeSize() int64 {
	if f.MaxBytes > 0 && f.MaxBytes < LargeBytes {
		return f.MaxBytes
	}
	return LargeBytes
}

// checkClaims fails for a claimed capability the store lacks and notes one
// it has but does not claim.
func checkClaims(t *testing.T, f Features, s core.BlobStore) {
	if s == nil {
		t.Fatal("the harness returned a nil store")
	}
	iface := reflect.TypeFor[core.BlobDeleter]()
	has := reflect.TypeOf(s).Implements(iface)
	switch {
	case f.Delete && !has:
		t.Errorf("Features.Delete is set but %T does not implement %s", s, iface)
	case !f.Delete && has:
		t.Logf("%T implements %s but Features.Delete is not set: its cases will be skipped", s, iface)
	}
	if f.MaxBytes < 0 {
		t.Errorf("Features.MaxBytes is negative: %d", f.MaxBytes)
	}
}

// deleter returns s as a core.BlobDeleter, failing when it is not one.
func deleter(t *testing.T, s core.BlobStore) core.BlobDeleter {
	t.Helper()
	d, ok := s.(core.BlobDeleter)
	if !ok {
		t.Fatalf("the store claims Features.Delete but %T does not implement core.BlobDeleter", s)
	}
	return d
}

// guard runs fn and turns a panic into a test failure naming what panicked,
// so one broken call does not take the whole test binary down.
func guard(t *testing.T, what string, fn func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", what, r)
		}
	}()
	fn()
}

// quote shortens a key for a message: hostile keys can be 64 KiB long.
func quote(key string) string {
	if len(key) > 80 {
		return strconv.Quote(key[:60]) + "…(" + strconv.Itoa(len(key)) + " bytes)"
	}
	return strconv.Quote(key)
}
