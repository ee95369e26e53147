// Package transporttest is the conformance suite every core.BreadBus
// runs, in the manner of Watermill's universal pub/sub tests: one set of
// cases, with Features naming what an adapter claims.
//
//	func TestConformance(t *testing.T) {
//		transporttest.Run(t, transporttest.Features{Replay: true},
//			func(t *testing.T) core.BreadBus { return mytransport.New(...) })
//	}
//
// The suite checks the contract of core.BreadBus: delivery per run,
// order per run, fan-out to every subscriber, isolation between runs, replay
// after a given seq, that a stalled subscriber never blocks the publisher,
// and that every crumb type survives the trip.
package transporttest
