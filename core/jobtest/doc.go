// Package jobtest is the conformance suite every core.JobQueue adapter runs,
// in the manner of go-cloud's drivertest: one set of cases, written against
// the port only, so they double as the executable form of the contract in
// core/jobs.go.
//
//	func TestConformance(t *testing.T) {
//		jobtest.Run(t, jobtest.Harness{
//			New: func(t *testing.T) core.JobQueue { return myqueue.New(...) },
//		})
//	}
//
// An adapter whose queues can share a backend (several replicas on one
// database) sets Harness.Shared, and the suite adds the cases that only
// make sense across replicas: each job worked once among them, a schedule
// ticking once across them, a job cancelled by one queue's Stop handed to
// another.
//
// The cases wait on the wall clock for jobs to be handed out, so an adapter
// that polls its backend should poll often in its harness (100 ms), and its
// retry backoff should be short (well under a second) or the retry case
// times out. Every case checks that the goroutines it caused are gone once
// its queues are stopped and the harness's cleanups have run.
package jobtest
