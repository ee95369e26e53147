// Package lmtest is the conformance suite for core.LanguageModel, for
// authors of provider adapters: Run checks an adapter against the model
// port's contract (event order, one finish last, tool calls, error codes,
// cancellation, released connections, concurrent use) whatever its vendor's
// wire format. The suite describes each call as a provider-neutral
// Scenario, which the adapter's harness serves, usually from a local
// Backend speaking the vendor's streaming format.
package lmtest
