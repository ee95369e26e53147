//go:build race

package examplestest

// raceEnabled builds the bread binary with the race detector when the tests
// run with it, so the servers they start are checked too.
const raceEnabled = true
