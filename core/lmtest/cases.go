package lmtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

var usage = core.Usage{InputTokens: 11, OutputTokens: 7, TotalTokens: 18}

func textCases() []testCase {
	return []testCase{
		{
			name:     "text deltas join and one finish comes last",
			scenario: Scenario{Text: []string{"Hel", "lo, ", "world"}, Finish: core.FinishStop, Usage: usage},
			run:      testReply,
		},
		{
			name: "unicode and JSON escapes survive",
			scenario: Scenario{
				Text:   []string{"héllo ", "世界 ", "🍞\n", `"quoted" \ back\slash `, "\ttab </script> \u2028 ", "\n\ndata: [DONE]\n\nevent: error\r\n", "end"},
				Finish: core.FinishStop, Usage: usage,
			},
			run: testReply,
		},
		{
			name:     "an empty reply still finishes",
			scenario: Scenario{Finish: core.FinishStop, Usage: core.Usage{InputTokens: 5, OutputTokens: 1, TotalTokens: 6}},
			run:      testReply,
		},
		{
			name:     "a long delta",
			scenario: Scenario{Text: []string{strings.Repeat("a long line of text ", 10_000), "and a short one"}, Finish: core.FinishStop, Usage: usage},
			run:      testReply,
		},
		{
			name:     "a reply cut by the token limit finishes with length",
			scenario: Scenario{Text: []string{"The answer is trunc"}, Finish: core.FinishLength, Usage: usage},
			run:      testReply,
		},
		{
			name:     "reasoning deltas, then text",
			needs:    needsReasoning,
			scenario: Scenario{Reasoning: []string{"Let me ", "think: 2+2=4."}, Text: []string{"4"}, Finish: core.FinishStop, Usage: usage},
			run:      testReply,
		},
	}
}

func toolCases() []testCase {
	return []testCase{
		{
			name:  "one tool call",
			needs: needsTools,
			scenario: Scenario{
				ToolCalls: []ToolCall{{ID: "call_1", Name: "get_weather", Args: `{"city":"Paris","days":3}`}},
				Finish:    core.FinishToolCalls, Usage: core.Usage{InputTokens: 20, OutputTokens: 9, TotalTokens: 29},
			},
			run: testReply,
		},
		{
			name:  "text, then parallel tool calls in order",
			needs: needsParallelTools,
			scenario: Scenario{
				Text: []string{"Checking ", "both."},
				ToolCalls: []ToolCall{
					{ID: "call_a", Name: "get_weather", Args: `{"city":"Rome","units":{"temp":"C"},"days":[1,2]}`},
					{ID: "call_b", Name: "get_time", Args: `{}`},
					{ID: "call_c", Name: "lookup", Args: `{"q":"é \"q\" \\ \n","n":null,"ok":true,"x":-1.5e3}`},
				},
				Finish: core.FinishToolCalls, Usage: core.Usage{InputTokens: 40, OutputTokens: 30, TotalTokens: 70},
			},
			run: testReply,
		},
	}
}

func errorCases() []testCase {
	statuses := []struct {
		status int
		msg    string
	}{
		{http.StatusUnauthorized, "Incorrect API key provided: " + APIKey + "."},
		{http.StatusForbidden, "The key " + APIKey + " may not use this model."},
		{http.StatusTooManyRequests, "Rate limit reached for requests. Retry later."},
		{http.StatusInternalServerError, "The server had an error while processing your request."},
		{http.StatusServiceUnavailable, "The service is temporarily overloaded."},
	}
	var cases []testCase
	for _, st := range statuses {
		code := CodeForStatus(st.status)
		cases = append(cases, testCase{
			name:     fmt.Sprintf("HTTP %d is %s", st.status, code),
			scenario: Scenario{Status: st.status, ErrorMessage: st.msg},
			run:      testFailure,
		})
	}
	return append(cases, testCase{
		name:     "a stream cut before its finish is PROVIDER_ERROR",
		scenario: Scenario{Text: []string{"partial ", "answer"}, Truncate: true},
		run:      testFailure,
	}, testCase{
		name:  "a stream cut after a tool call is PROVIDER_ERROR",
		needs: needsTools,
		scenario: Scenario{
			Text:      []string{"Let me check."},
			ToolCalls: []ToolCall{{ID: "call_1", Name: "get_weather", Args: `{"city":"Paris"}`}},
			Truncate:  true,
		},
		run: testFailure,
	})
}

func cancelCases() []testCase {
	return []testCase{
		{
			name:     "cancelling mid-stream ends it with ctx's error",
			scenario: Scenario{Text: []string{"first ", "second"}, Stall: true},
			run:      testCancelMidStream,
		},
		{
			name:     "a context cancelled before the call",
			scenario: Scenario{Text: []string{"never"}, Finish: core.FinishStop, Usage: usage},
			run:      testCancelledBefore,
		},
		{
			name:     "a deadline passing while the stream stalls",
			scenario: Scenario{Stall: true},
			run:      testDeadline,
		},
	}
}

func earlyStopCases() []testCase {
	return []testCase{
		{
			name:     "stopping mid-stream releases the call",
			scenario: Scenario{Text: []string{"a", "b", "c"}, Stall: true},
			run:      testStopMidStream,
		},
		{
			name:     "stopping after every prefix of a text reply",
			scenario: Scenario{Text: []string{"one ", "two ", "three"}, Finish: core.FinishStop, Usage: usage},
			run:      testStopAfterEachPrefix,
		},
		{
			name:  "stopping after every prefix of a tool-call reply",
			needs: needsTools,
			scenario: Scenario{
				Text:      []string{"Let me look."},
				ToolCalls: []ToolCall{{ID: "call_1", Name: "get_weather", Args: `{"city":"Oslo"}`}},
				Finish:    core.FinishToolCalls, Usage: usage,
			},
			run: testStopAfterEachPrefix,
		},
	}
}

func concurrencyCases() []testCase {
	s := Scenario{Text: []string{"same ", "answer ", "for ", "everyone"}, Finish: core.FinishStop, Usage: usage}
	return []testCase{
		{name: "calls in sequence on one model", scenario: s, run: testSequential},
		{name: "concurrent calls on one model", scenario: s, run: testConcurrent},
	}
}

// testReply streams a scenario that succeeds and checks all of it.
func testReply(t *testing.T, f Features, c *caseEnv) {
	o := c.run(t, t.Context(), 0, nil)
	checkShape(t, o)
	if err := checkReply(f, c.s, o); err != nil {
		t.Error(err)
	}
}

func testFailure(t *testing.T, _ Features, c *caseEnv) {
	o := c.run(t, t.Context(), 0, nil)
	checkShape(t, o)
	checkFailure(t, o, c.s.wantCode())
	if got, full := joined(o.events, core.EventTextDelta), strings.Join(c.s.Text, ""); !strings.HasPrefix(full, got) {
		t.Errorf("text before the failure %q is not a prefix of the scenario's %q", got, full)
	}
}

// wantCancelled checks a stream ended by its context: ctx's error, no
// finish.
func wantCancelled(t *testing.T, o outcome, target error) {
	t.Helper()
	checkShape(t, o)
	if !errors.Is(o.err, target) {
		t.Errorf("the stream ended with %v (%d events), want ctx's error %v", o.err, len(o.events), target)
	}
	if len(ofType(o.events, core.EventFinish)) > 0 {
		t.Error("a cancelled stream yielded a finish")
	}
}

func testCancelMidStream(t *testing.T, _ Features, c *caseEnv) {
	base := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	o := c.run(t, ctx, 0, func(ev core.ModelEvent) {
		if ev.Type == core.EventTextDelta {
			cancel()
		}
	})
	if len(ofType(o.events, core.EventTextDelta)) == 0 {
		t.Fatalf("no text delta arrived before the stall (events %+v, error %v)", o.events, o.err)
	}
	wantCancelled(t, o, context.Canceled)
	if !c.hasBackend() {
		goroutinesSettle(t, base, "after the cancel")
	}
}

func testCancelledBefore(t *testing.T, _ Features, c *caseEnv) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	wantCancelled(t, c.run(t, ctx, 0, nil), context.Canceled)
}

func testDeadline(t *testing.T, _ Features, c *caseEnv) {
	base := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	wantCancelled(t, c.run(t, ctx, 0, nil), context.DeadlineExceeded)
	if !c.hasBackend() {
		goroutinesSettle(t, base, "after the deadline")
	}
}

// testStopMidStream breaks out of a stream the backend holds open: the
// model must let go of the request, which the backend sees end.
func testStopMidStream(t *testing.T, _ Features, c *caseEnv) {
	base := runtime.NumGoroutine()
	o := c.run(t, t.Context(), 1, nil)
	if !o.stopped {
		t.Fatalf("the stream ended before the first event was consumed: %v", o.err)
	}
	if c.hasBackend() {
		if err := c.s.probe.released(Timeout); err != nil {
			t.Errorf("after breaking out of the range: %v", err)
		}
	} else {
		goroutinesSettle(t, base, "after breaking out of the range")
	}
}

// testStopAfterEachPrefix streams the scenario once in full, then again
// stopping after 1, 2, ... n-1 events: no stop may panic (a yield after the
// range body returned false does) or keep the call alive.
func testStopAfterEachPrefix(t *testing.T, f Features, c *caseEnv) {
	full := c.run(t, t.Context(), 0, nil)
	checkShape(t, full)
	if err := checkReply(f, c.s, full); err != nil {
		t.Fatal(err)
	}
	base := runtime.NumGoroutine()
	for k := 1; k < len(full.events); k++ {
		o := c.run(t, t.Context(), k, nil)
		if !o.stopped {
			t.Errorf("stopping after %d events: the stream ended first (%d events, error %v)", k, len(o.events), o.err)
		}
		if c.hasBackend() {
			if err := c.s.probe.released(Timeout); err != nil {
				t.Errorf("after stopping at event %d of %d: %v", k, len(full.events), err)
				return
			}
		}
	}
	if !c.hasBackend() {
		goroutinesSettle(t, base, "after the early stops")
	}
}

func testSequential(t *testing.T, f Features, c *caseEnv) {
	for i := range 5 {
		o := c.run(t, t.Context(), 0, nil)
		checkShape(t, o)
		if err := checkReply(f, c.s, o); err != nil {
			t.Errorf("call %d: %v", i+1, err)
		}
	}
}

// testConcurrent streams from one model on many goroutines at once, some
// to the end and some stopping early. Run it with -race.
func testConcurrent(t *testing.T, f Features, c *caseEnv) {
	const workers, calls = 8, 4
	base := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range calls {
				stop := 0
				if (w+i)%3 == 0 {
					stop = 2
				}
				o, ended := consume(t.Context(), c.model, c.request(), stop, nil)
				switch {
				case !ended:
					t.Errorf("worker %d call %d: the stream did not end within %v", w, i, Timeout)
					return
				case o.panicked != nil:
					t.Errorf("worker %d call %d: ranging panicked: %v", w, i, o.panicked)
				case stop > 0 && !o.stopped:
					t.Errorf("worker %d call %d: the stream ended before its second event: %v", w, i, o.err)
				case stop == 0:
					if err := checkReply(f, c.s, o); err != nil {
						t.Errorf("worker %d call %d: %v", w, i, err)
					}
				}
			}
		})
	}
	wg.Wait()
	if !c.hasBackend() {
		goroutinesSettle(t, base, "after the concurrent calls")
	}
}
