package lmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

// outcome is what one range over a stream produced.
type outcome struct {
	events []core.ModelEvent
	// err is the first error yielded, errEvent the event paired with it.
	err      error
	errEvent core.ModelEvent
	// late counts values yielded after the first error or finish.
	late int
	// stopped: the consumer broke out of the range.
	stopped bool
	// panicked holds a panic raised while ranging (a yield after the
	// range body returned false is one).
	panicked any
}

// maxValues bounds a range so a stream that never ends on its own cannot
// spin forever.
const maxValues = 100_000

// consume ranges over one call. It stops after stopAfter events (0: never)
// and calls onEvent with each event before deciding; it does not stop at a
// finish or an error, so values yielded after them are counted. It runs the
// range on its own goroutine and gives up after Timeout.
func consume(ctx context.Context, m core.LanguageModel, req core.ModelRequest, stopAfter int, onEvent func(core.ModelEvent)) (outcome, bool) {
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			if r := recover(); r != nil {
				o.panicked = r
			}
			done <- o
		}()
		terminal := false
		n := 0
		for ev, err := range m.Stream(ctx, req) {
			n++
			if terminal {
				o.late++
			}
			if err != nil {
				if o.err == nil && !terminal {
					o.err, o.errEvent = err, ev
				}
				terminal = true
			} else if !terminal {
				o.events = append(o.events, ev)
				if ev.Type == core.EventFinish {
					terminal = true
				}
				if onEvent != nil {
					onEvent(ev)
				}
				if stopAfter > 0 && len(o.events) >= stopAfter {
					o.stopped = true
					break
				}
			}
			if n >= maxValues {
				o.stopped = true
				break
			}
		}
	}()
	select {
	case o := <-done:
		return o, true
	case <-time.After(Timeout):
		return outcome{}, false
	}
}

// run consumes one call and fails the case when it hangs or panics.
func (c *caseEnv) run(t *testing.T, ctx context.Context, stopAfter int, onEvent func(core.ModelEvent)) outcome {
	t.Helper()
	o, ended := consume(ctx, c.model, c.request(), stopAfter, onEvent)
	if !ended {
		t.Fatalf("the stream did not end within %v", Timeout)
	}
	if o.panicked != nil {
		t.Fatalf("ranging over the stream panicked: %v", o.panicked)
	}
	return o
}

var knownTypes = map[core.ModelEventType]bool{
	core.EventTextDelta: true, core.EventReasoningDelta: true, core.EventToolInputStart: true,
	core.EventToolInputDelta: true, core.EventToolInputEnd: true, core.EventToolCall: true,
	core.EventFile: true, core.EventFinish: true,
}

// checkShape asserts the port's rules on a stream ranged to its end: known
// event types; the sequence ends with exactly one finish or one error and
// nothing after it; an error comes with a zero event; each tool call's
// input events run start, deltas, end, and its deltas join to its input.
func checkShape(t *testing.T, o outcome) {
	t.Helper()
	finishes := 0
	for i, e := range o.events {
		if !knownTypes[e.Type] {
			t.Errorf("event %d has unknown type %q", i, e.Type)
		}
		if e.Type == core.EventFinish {
			finishes++
			if i != len(o.events)-1 {
				t.Errorf("finish is event %d of %d, not the last", i+1, len(o.events))
			}
		}
	}
	switch {
	case finishes > 1:
		t.Errorf("%d finish events, want exactly one", finishes)
	case finishes == 1 && o.err != nil:
		t.Errorf("the stream yielded a finish and then the error %v", o.err)
	case finishes == 0 && o.err == nil && !o.stopped:
		t.Errorf("the stream ended with neither a finish nor an error (%d events)", len(o.events))
	}
	if o.late > 0 {
		t.Errorf("%d values were yielded after the stream's finish or error", o.late)
	}
	if o.err != nil && !reflect.ValueOf(o.errEvent).IsZero() {
		t.Errorf("the error %v came with a non-zero event %+v", o.err, o.errEvent)
	}
	checkToolProtocol(t, o.events, finishes == 1)
}

// checkToolProtocol checks streamed tool input: per call id, start, then
// deltas, then end, then the tool-call, whose input is valid JSON equal to
// the joined deltas. A tool-call may come without any input events. Only
// a finished stream must have called every tool whose input it started.
func checkToolProtocol(t *testing.T, evs []core.ModelEvent, finished bool) {
	t.Helper()
	state := map[string]string{}
	deltas := map[string]*strings.Builder{}
	for i, e := range evs {
		id := e.ToolCallID
		switch e.Type {
		case core.EventToolInputStart:
			if state[id] != "" {
				t.Errorf("event %d: a second tool-input-start for call %q", i+1, id)
			}
			state[id] = "open"
			deltas[id] = &strings.Builder{}
		case core.EventToolInputDelta:
			if state[id] != "open" {
				t.Errorf("event %d: tool-input-delta for call %q outside its start and end", i+1, id)
				continue
			}
			deltas[id].WriteString(e.Delta)
		case core.EventToolInputEnd:
			if state[id] != "open" {
				t.Errorf("event %d: tool-input-end for call %q without its start", i+1, id)
			}
			state[id] = "ended"
		case core.EventToolCall:
			if s := state[id]; s != "" && s != "ended" {
				t.Errorf("event %d: tool-call %q in state %q (want after tool-input-end, or alone)", i+1, id, s)
			}
			if !json.Valid(e.Input) {
				t.Errorf("event %d: tool-call %q input is not valid JSON: %s", i+1, id, e.Input)
			} else if d := deltas[id]; d != nil && d.Len() > 0 && !jsonEqual([]byte(d.String()), e.Input) {
				t.Errorf("event %d: tool-call %q input %s differs from its joined deltas %s", i+1, id, e.Input, d.String())
			}
			state[id] = "called"
		}
	}
	for id, s := range state {
		if finished && s != "called" {
			t.Errorf("tool call %q ended in state %q, never called", id, s)
		}
	}
}

// jsonEqual compares two JSON texts by value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

func joined(evs []core.ModelEvent, typ core.ModelEventType) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Type == typ {
			b.WriteString(e.Delta)
		}
	}
	return b.String()
}

func ofType(evs []core.ModelEvent, typ core.ModelEventType) []core.ModelEvent {
	var out []core.ModelEvent
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// checkReply asserts a stream that must succeed: its shape, its text and
// reasoning, its tool calls, and its finish (reason and, unless
// NoUsage, usage). It returns a description of the first difference, for
// callers checking many replies from goroutines.
func checkReply(f Features, s Scenario, o outcome) error {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if o.err != nil {
		return fmt.Errorf("the stream failed: %v", o.err)
	}
	if got, want := joined(o.events, core.EventTextDelta), strings.Join(s.Text, ""); got != want {
		add("text deltas join to %q, want %q", got, want)
	}
	if got, want := joined(o.events, core.EventReasoningDelta), strings.Join(s.Reasoning, ""); got != want {
		add("reasoning deltas join to %q, want %q", got, want)
	}
	calls := ofType(o.events, core.EventToolCall)
	if len(calls) != len(s.ToolCalls) {
		add("%d tool calls, want %d", len(calls), len(s.ToolCalls))
	} else {
		ids := map[string]bool{}
		for i, want := range s.ToolCalls {
			got := calls[i]
			switch {
			case f.NoToolCallIDs && (got.ToolCallID == "" || ids[got.ToolCallID]):
				add("tool call %d has id %q, want a non-empty id of its own", i+1, got.ToolCallID)
			case !f.NoToolCallIDs && got.ToolCallID != want.ID:
				add("tool call %d has id %q, want %q", i+1, got.ToolCallID, want.ID)
			}
			ids[got.ToolCallID] = true
			if got.ToolName != want.Name {
				add("tool call %d is %q, want %q", i+1, got.ToolName, want.Name)
			}
			if !json.Valid(got.Input) || !jsonEqual(got.Input, []byte(want.Args)) {
				add("tool call %d (%s) has input %s, want %s", i+1, want.Name, got.Input, want.Args)
			}
		}
	}
	if n := len(o.events); n == 0 || o.events[n-1].Type != core.EventFinish {
		add("the stream has no finish event")
	} else {
		fin := o.events[n-1]
		if fin.FinishReason != s.Finish {
			add("finish reason %q, want %q", fin.FinishReason, s.Finish)
		}
		if !f.NoUsage && fin.Usage != s.Usage {
			add("finish usage %+v, want %+v", fin.Usage, s.Usage)
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// checkFailure asserts a stream that must fail with a BreadError of code,
// whose text does not carry the API key.
func checkFailure(t *testing.T, o outcome, code string) {
	t.Helper()
	if o.err == nil {
		t.Fatalf("the stream did not fail (%d events); want %s", len(o.events), code)
	}
	if strings.Contains(o.err.Error(), APIKey) {
		t.Errorf("the error's text carries the API key: %s", o.err.Error())
	}
	var be *core.BreadError
	if !errors.As(o.err, &be) {
		t.Fatalf("the error %v is a %T, want a *core.BreadError with code %s", o.err, o.err, code)
	}
	if be.Code != code {
		t.Errorf("the error has code %s, want %s (%s)", be.Code, code, be.Message)
	}
	if strings.Contains(fmt.Sprint(be.Context), APIKey) {
		t.Errorf("the error's context carries the API key: %v", be.Context)
	}
	for cause := errors.Unwrap(be); cause != nil; cause = errors.Unwrap(cause) {
		if strings.Contains(cause.Error(), APIKey) {
			t.Errorf("the error's cause carries the API key: %s", cause.Error())
			break
		}
	}
	if len(ofType(o.events, core.EventFinish)) > 0 {
		t.Error("a failed stream yielded a finish event")
	}
}
