package lmtest

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/breadai/bread/core"
)

// APIKey is the key a harness configures its model with. Error scenarios
// put it in the vendor's error message, as real APIs echo a bad key back,
// and the suite fails any error whose text still carries it.
const APIKey = "sk-lmtest-5ecret-0123456789abcdef"

// Scenario is one model call, described without a wire format. The backend
// a harness builds answers every request with it, in this order:
//
//  1. Status != 0: the vendor's error response with that HTTP status and
//     ErrorMessage, and nothing else.
//  2. Otherwise a stream: the Reasoning chunks as reasoning deltas, the
//     Text chunks as text deltas, then each of ToolCalls (arguments may be
//     streamed in pieces, as the vendor does).
//  3. Then, if Stall, the stream stays open, finishing nothing, until the
//     client goes away (see Hang); if Truncate, the connection drops
//     without the vendor's end-of-stream marker; otherwise the stream
//     finishes with Finish and Usage, the way the vendor reports them.
type Scenario struct {
	// Name names the case, for logs and harnesses that keep files per
	// scenario.
	Name string
	// Reasoning and Text are streamed as one delta per chunk.
	Reasoning []string
	Text      []string
	// ToolCalls are called after the text, in order.
	ToolCalls []ToolCall
	// Finish is the reason the stream finishes with: core.FinishStop,
	// core.FinishToolCalls or core.FinishLength.
	Finish core.FinishReason
	// Usage is the token usage the stream reports; TotalTokens is always
	// InputTokens + OutputTokens.
	Usage core.Usage
	// Status, when non-zero, is an HTTP error status (401, 429, 500,
	// 503) answered instead of a stream, with ErrorMessage as the vendor's
	// error message.
	Status       int
	ErrorMessage string
	// Truncate drops the connection after the chunks, before any finish.
	Truncate bool
	// Stall holds the stream open after the chunks until the client goes.
	Stall bool

	probe *probe
}

// ToolCall is one tool call of a scenario.
type ToolCall struct {
	// ID is the vendor's call id. A vendor without ids ignores it (see
	// Features.NoToolCallIDs).
	ID   string
	Name string
	// Args is the arguments as JSON text.
	Args string
}

// CodeForStatus is the BreadError code a model must return for an HTTP
// error status: PROVIDER_AUTH for 401 and 403, RATE_LIMITED for 429, and
// PROVIDER_ERROR otherwise.
func CodeForStatus(status int) string {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return core.CodeProviderAuth
	case http.StatusTooManyRequests:
		return core.CodeRateLimited
	default:
		return core.CodeProviderError
	}
}

// wantCode is the code s must fail with, or "" when it must not fail.
func (s Scenario) wantCode() string {
	switch {
	case s.Status != 0:
		return CodeForStatus(s.Status)
	case s.Truncate:
		return core.CodeProviderError
	}
	return ""
}

// Events returns the events a conforming model yields for s, in the
// canonical form: reasoning deltas, text deltas, then for each tool call
// tool-input-start, one tool-input-delta with the arguments,
// tool-input-end and tool-call, then a finish. A scenario that fails,
// truncates or stalls has no finish; one with a Status has no events.
// Harnesses of models without a wire format (scripted, replayed) play
// these events, then Err.
func (s Scenario) Events() []core.ModelEvent {
	if s.Status != 0 {
		return nil
	}
	var evs []core.ModelEvent
	for _, c := range s.Reasoning {
		evs = append(evs, core.ModelEvent{Type: core.EventReasoningDelta, Delta: c})
	}
	for _, c := range s.Text {
		evs = append(evs, core.ModelEvent{Type: core.EventTextDelta, Delta: c})
	}
	for _, c := range s.ToolCalls {
		evs = append(evs,
			core.ModelEvent{Type: core.EventToolInputStart, ToolCallID: c.ID, ToolName: c.Name},
			core.ModelEvent{Type: core.EventToolInputDelta, ToolCallID: c.ID, ToolName: c.Name, Delta: c.Args},
			core.ModelEvent{Type: core.EventToolInputEnd, ToolCallID: c.ID, ToolName: c.Name},
			core.ModelEvent{Type: core.EventToolCall, ToolCallID: c.ID, ToolName: c.Name, Input: json.RawMessage(c.Args)},
		)
	}
	if s.Stall || s.Truncate {
		return evs
	}
	return append(evs, core.ModelEvent{Type: core.EventFinish, FinishReason: s.Finish, Usage: s.Usage})
}

// Err returns the error a conforming model yields after Events for s, nil
// when s does not fail: a *core.BreadError with the code the suite expects
// (CodeForStatus for a Status, PROVIDER_ERROR for a Truncate) and a message
// that, like a real adapter's, leaves the key out.
func (s Scenario) Err() error {
	code := s.wantCode()
	if code == "" {
		return nil
	}
	msg := "lmtest: the stream ended before the model finished"
	if s.Status != 0 {
		msg = "lmtest: HTTP " + strconv.Itoa(s.Status) + " " + http.StatusText(s.Status)
	}
	return &core.BreadError{Code: code, Message: msg}
}
