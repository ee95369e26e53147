// Package bunstoretest holds the checks every bunstore-based store runs on
// top of the conformance suite (core/storetest): properties of the shared
// row models and of each dialect's schema that the suite, which compares
// JSON after compaction, does not see.
//
//	func TestPayloadBytesExact(t *testing.T) { bunstoretest.PayloadBytesExact(t, newStore(t)) }
package bunstoretest
