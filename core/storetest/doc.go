// Package storetest is the conformance suite for core.BreadStore adapters.
//
// Every store, first-party or not, runs the same cases from its own tests, the
// way Go CDK's drivertest and Watermill's universal pub/sub tests work:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, storetest.Features{CrumbLog: true, Loops: true, TaskRuns: true}, func(t *testing.T) core.BreadStore {
//			s := mystore.Open(...) // fresh, empty and migrated
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
//	func BenchmarkStore(b *testing.B) {
//		storetest.Bench(b, func(b *testing.B) core.BreadStore { ... })
//	}
//
// Features declares the optional capabilities the store claims. A claimed
// capability the store does not implement fails the suite; a case that needs
// a capability the store does not claim is skipped, visibly, with the reason.
//
// The cases observe stores only through the ports, so they double as the
// executable form of the contract written in core/store.go. Where a store may
// legitimately normalise data (JSON whitespace, nil versus empty slices), the
// cases compare JSON semantically; where the contract promises bytes
// (message content, logged crumbs) they compare bytes.
//
// Cases that depend on elapsed time (session cleanup) wait on the wall clock
// rather than sleeping a guessed amount, and stop asserting on the part of an
// outcome a stalled machine could have changed. They assume the store stamps
// records from a clock in step with the test process's (the same machine, or
// one kept in sync), in Unix milliseconds.
package storetest
