// Package lmtest is the conformance suite for core.LanguageModel: authors of
// provider adapters run it to prove their adapter keeps the model port's
// contract (event order, one finish last, tool calls, error codes,
// cancellation, releasing connections, concurrent use), whatever the
// vendor's wire format.
//
// The suite cannot speak every vendor's API, so it is scenario-driven. It
// describes each model call it wants in provider-neutral terms, a Scenario
// (stream this text, call these tools, fail with HTTP 429, stall until
// cancelled), and the adapter's harness returns a model whose backend
// answers every request with that scenario, typically a local Backend
// speaking the vendor's real streaming format:
//
//	func TestConformance(t *testing.T) {
//		lmtest.Run(t, lmtest.Features{}, func(t *testing.T, s lmtest.Scenario) core.LanguageModel {
//			b := lmtest.NewBackend(t, s, myVendorHandler(s)) // writes s in the vendor's SSE
//			return myprovider.New(myprovider.Options{APIKey: lmtest.APIKey, BaseURL: b.URL, HTTPClient: b.Client()})
//		})
//	}
//
// A model with no wire format (a scripted or replayed one) answers from
// Scenario.Events and Scenario.Err instead. Features declares what a model
// cannot do (tool calls, reasoning, usage...); the cases needing it are
// skipped with the reason.
//
// A model built on a Backend gets the strongest release checks: after every
// case the suite waits for the backend to see each request end and for the
// model to close each response body. Other models get a goroutine count
// that must settle.
package lmtest
