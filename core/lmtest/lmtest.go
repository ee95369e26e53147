package lmtest

import (
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

// Features declares what a model cannot do. The zero value claims
// everything; each flag skips the cases that need the capability, visibly,
// with the reason.
type Features struct {
	// NoToolCalls: the model cannot call tools.
	NoToolCalls bool
	// NoParallelToolCalls: at most one tool call per turn.
	NoParallelToolCalls bool
	// NoToolCallIDs: the vendor's calls carry no ids, so the adapter makes
	// its own; the suite then checks ids are non-empty and distinct
	// instead of equal to the scenario's.
	NoToolCallIDs bool
	// NoReasoning: the model streams no reasoning.
	NoReasoning bool
	// NoUsage: the finish event carries no token usage.
	NoUsage bool
}

// Harness returns a model answering every call with s: its backend
// (usually a Backend from NewBackend) replays s for each request. The suite
// calls it once per case and may call the model's Stream many times,
// concurrently. It registers any teardown with t.Cleanup; it may t.Skip a
// scenario the vendor cannot express.
type Harness func(t *testing.T, s Scenario) core.LanguageModel

// Timeout bounds how long the suite waits for a stream to end, for a
// cancelled one to notice, and for connections to be released, before it
// declares a hang. Nothing is timed below it.
var Timeout = 10 * time.Second

type testCase struct {
	name     string
	needs    func(Features) string // "" when the case can run
	scenario Scenario
	run      func(t *testing.T, f Features, c *caseEnv)
}

// caseEnv is one case's model and scenario.
type caseEnv struct {
	s     Scenario
	model core.LanguageModel
}

// Run runs every conformance case against models made by newModel, each
// case as its own subtest with its own model. An HTTP adapter serves each
// scenario from a Backend in its vendor's wire format:
//
//	func TestConformance(t *testing.T) {
//		lmtest.Run(t, lmtest.Features{}, func(t *testing.T, s lmtest.Scenario) core.LanguageModel {
//			b := lmtest.NewBackend(t, s, myVendorHandler(s)) // writes s as the vendor streams
//			return myprovider.New(myprovider.Options{APIKey: lmtest.APIKey, BaseURL: b.URL, HTTPClient: b.Client()})
//		})
//	}
//
// After every case the suite then waits for the backend to see each request
// end and for the model to close each response body. A model with no wire
// format (scripted, replayed) plays Scenario.Events and Scenario.Err
// instead, and its early stops are checked by a goroutine count that must
// settle; that check assumes no other test runs in parallel with the suite.
func Run(t *testing.T, f Features, newModel Harness) {
	t.Helper()
	for _, g := range groups() {
		t.Run(g.name, func(t *testing.T) {
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					if c.needs != nil {
						if reason := c.needs(f); reason != "" {
							t.Skip(reason)
						}
					}
					s := c.scenario
					s.Name = g.name + "/" + c.name
					s.probe = newProbe()
					t.Cleanup(s.probe.shutdown)
					m := newModel(t, s)
					if m == nil {
						t.Fatal("the harness returned a nil model")
					}
					env := &caseEnv{s: s, model: m}
					c.run(t, f, env)
					if !t.Failed() { // a failed case may have reported its leak already
						env.checkReleased(t)
					}
				})
			}
		})
	}
}

type group struct {
	name  string
	cases []testCase
}

func groups() []group {
	return []group{
		{"Text", textCases()},
		{"ToolCalls", toolCases()},
		{"Errors", errorCases()},
		{"Cancellation", cancelCases()},
		{"EarlyStop", earlyStopCases()},
		{"Concurrency", concurrencyCases()},
	}
}

func needsTools(f Features) string {
	if f.NoToolCalls {
		return "model does not claim tool calls (Features.NoToolCalls)"
	}
	return ""
}

func needsParallelTools(f Features) string {
	if r := needsTools(f); r != "" {
		return r
	}
	if f.NoParallelToolCalls {
		return "model does not claim parallel tool calls (Features.NoParallelToolCalls)"
	}
	return ""
}

func needsReasoning(f Features) string {
	if f.NoReasoning {
		return "model does not claim reasoning (Features.NoReasoning)"
	}
	return ""
}

// request is the call the suite makes: a short conversation, and the
// scenario's tools when it calls any.
func (c *caseEnv) request() core.ModelRequest {
	req := core.ModelRequest{
		System:   "You are the lmtest conformance suite's model.",
		Messages: []core.Message{{Role: core.RoleUser, Parts: []core.Part{core.TextPart("Answer the scenario " + c.s.Name + ".")}}},
	}
	for _, tc := range c.s.ToolCalls {
		req.Tools = append(req.Tools, core.ToolSpec{
			Name:        tc.Name,
			Description: "A tool of the lmtest suite.",
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":true}`),
		})
	}
	return req
}

// checkReleased is run after every case: every backend request ended and
// every response body was closed. A model without a Backend is checked by
// the goroutine count in the cases that stop early.
func (c *caseEnv) checkReleased(t *testing.T) {
	t.Helper()
	if c.s.probe == nil {
		return
	}
	if err := c.s.probe.released(Timeout); err != nil {
		t.Errorf("after the case, the model still holds its connection: %v", err)
	}
}

// hasBackend reports whether the harness built its model on a Backend.
func (c *caseEnv) hasBackend() bool { return len(c.s.probe.list()) > 0 }

// goroutinesSettle waits for the goroutine count to fall back to at most
// base, for models without a Backend.
func goroutinesSettle(t *testing.T, base int, what string) {
	t.Helper()
	deadline := time.Now().Add(Timeout)
	for {
		n := runtime.NumGoroutine()
		if n <= base {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: %d goroutines, %d before the call: the stream leaks", what, n, base)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
