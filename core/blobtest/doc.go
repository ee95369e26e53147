// Package blobtest is the conformance suite for core.BlobStore: every blob
// store, first-party or not, runs it from its own tests to prove it keeps the
// port's contract (bytes, mime type and size round trip, NOT_FOUND for
// missing keys, keys that cannot escape the store, cancellation, streaming,
// concurrency, and the optional core.BlobDeleter).
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
// It is written in the style of core/storetest (and Go CDK's drivertest):
// Features declares the optional capabilities a store claims; a claimed
// capability the store lacks fails the suite, and a case needing one it does
// not claim is skipped with the reason. Nothing is timed: the large-object
// case checks that a store streams a reader it cannot seek or size, not how
// fast.
package blobtest
