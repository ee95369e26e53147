package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// BreadError is the one error type bread returns across a boundary: a stable
// Code from the catalogue in codes.go, a human Message, optional Context for
// logs and server-side handlers, and the underlying Cause.
//
// Clients never see Cause, and over HTTP they see neither Context: see
// Sanitize. On the wire (inside tool:error and agent:error crumbs) a
// BreadError is {"name":"BreadError","code","message","context"}.
//
// errors.Is matches two BreadErrors by Code, so the sentinels in codes.go
// work as targets: errors.Is(err, core.ErrCheckpointNotFound).
type BreadError struct {
	Code    string
	Message string
	Context map[string]any
	Cause   error
}

// Errorf returns a *BreadError with the given code and a formatted message.
// A %w verb in format sets Cause as fmt.Errorf would.
func Errorf(code, format string, args ...any) *BreadError {
	wrapped := fmt.Errorf(format, args...)
	e := &BreadError{Code: code, Message: wrapped.Error()}
	switch w := wrapped.(type) {
	case interface{ Unwrap() error }:
		e.Cause = w.Unwrap()
	case interface{ Unwrap() []error }:
		// Several %w verbs: keep the fmt error so every cause stays
		// reachable through errors.Is and errors.As.
		e.Cause = wrapped
	}
	return e
}

// Error implements error.
func (e *BreadError) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Code + ": " + e.Message
}

// Unwrap returns the cause, so errors.Is and errors.As see through.
func (e *BreadError) Unwrap() error { return e.Cause }

// Is reports whether target is a *BreadError with the same code.
func (e *BreadError) Is(target error) bool {
	t, ok := target.(*BreadError)
	return ok && t != nil && t.Code == e.Code
}

// WithContext returns a copy of e with key set in its context.
func (e *BreadError) WithContext(key string, value any) *BreadError {
	cp := *e
	cp.Context = make(map[string]any, len(e.Context)+1)
	for k, v := range e.Context {
		cp.Context[k] = v
	}
	cp.Context[key] = value
	return &cp
}

// WithCause returns a copy of e whose Cause is cause.
func (e *BreadError) WithCause(cause error) *BreadError {
	cp := *e
	cp.Cause = cause
	return &cp
}

type wireError struct {
	Name    string         `json:"name"`
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Context map[string]any `json:"context,omitempty"`
}

// MarshalJSON writes the wire form. The cause is never written.
func (e *BreadError) MarshalJSON() ([]byte, error) {
	return json.Marshal(wireError{Name: "BreadError", Code: e.Code, Message: e.Message, Context: e.Context})
}

// UnmarshalJSON reads the wire form. A missing code becomes AGENT_ERROR, as
// in the original.
func (e *BreadError) UnmarshalJSON(b []byte) error {
	var w wireError
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Code == "" {
		w.Code = CodeAgentError
	}
	*e = BreadError{Code: w.Code, Message: w.Message, Context: w.Context}
	return nil
}

// AsBreadError returns err as a *BreadError: itself when it is one (or wraps
// one), RUN_CANCELLED for context cancellation, otherwise fallbackCode with
// err's message and err as the cause. It returns nil for a nil err.
func AsBreadError(err error, fallbackCode string) *BreadError {
	if err == nil {
		return nil
	}
	var be *BreadError
	if errors.As(err, &be) {
		return be
	}
	if errors.Is(err, context.Canceled) {
		return &BreadError{Code: CodeRunCancelled, Message: "the run was cancelled", Cause: err}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &BreadError{Code: CodeRunCancelled, Message: "the run's deadline passed", Cause: err}
	}
	return &BreadError{Code: fallbackCode, Message: err.Error(), Cause: err}
}

// ClientError is all of an error a client may see: a code and a message.
// Causes, stacks and context stay on the server.
type ClientError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error implements error.
func (c ClientError) Error() string { return c.Code + ": " + c.Message }

// Sanitize reduces any error to what a client may see. A *BreadError keeps its
// code and message; an errors.Join of several errors is AGGREGATE_ERROR;
// anything else is INTERNAL_ERROR with a generic message, because the text of
// an arbitrary error can carry provider responses, paths or secrets. A
// *BreadError that only carries such a text (AsBreadError's fallback for a
// plain error: its message is its cause's text) is sanitized as that cause.
func Sanitize(err error) ClientError {
	var be *BreadError
	if errors.As(err, &be) && be != nil {
		if !be.wrapsPlainText() {
			return ClientError{Code: be.Code, Message: be.Message}
		}
		err = be.Cause
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 1 {
		return ClientError{Code: CodeAggregateError, Message: "multiple operations failed"}
	}
	return ClientError{Code: CodeInternalError, Message: "internal server error"}
}

// wrapsPlainText reports whether e's message is the text of a cause that is
// no *BreadError, as AsBreadError makes it for a plain error: text never
// written for a client.
func (e *BreadError) wrapsPlainText() bool {
	if e.Cause == nil || e.Message != e.Cause.Error() {
		return false
	}
	var inner *BreadError
	return !errors.As(e.Cause, &inner)
}

// ClientSafe returns a copy of e that keeps only what Sanitize lets a client
// see (code and message; INTERNAL_ERROR for an error that only carries a
// plain error's text), fit for a crumb that leaves the server.
func (e *BreadError) ClientSafe() *BreadError {
	if e == nil {
		return nil
	}
	ce := Sanitize(e)
	return &BreadError{Code: ce.Code, Message: ce.Message}
}
