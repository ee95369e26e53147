// Package crumbtest holds every mapper of crumbs to a decision about each
// crumb type. A mapper (a protocol's event mapper, a terminal printer, an
// exporter) keeps one table with an entry per crumb type saying what that
// type becomes, or that it is deliberately dropped; its test calls
// CheckDecisions, which fails the moment core gains a crumb type the table
// does not decide, and checks the table against the mapper with Samples.
//
//	var decisions = map[string][]string{
//		core.TypeTextDelta:         {"TEXT"},
//		core.TypeToolResultPartial: nil, // dropped: the protocol has no partial result
//		...
//	}
//
//	func TestEveryCrumbTypeIsDecided(t *testing.T) {
//		crumbtest.CheckDecisions(t, "mymapper", decisions)
//		for _, c := range crumbtest.Samples() {
//			for _, shape := range []core.Crumb{c, crumbtest.Decoded(t, c)} {
//				// map shape, compare with decisions[c.CrumbType()]
//			}
//		}
//	}
//
// Decoded gives a sample back as a store's crumb log or a bus does, its
// payloads raw JSON, so a mapper is held to map both shapes alike.
package crumbtest
