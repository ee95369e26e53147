package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
)

func TestBreadErrorString(t *testing.T) {
	cases := []struct {
		err  *core.BreadError
		want string
	}{
		{&core.BreadError{Code: core.CodeAgentNotFound, Message: `agent "x" is not registered`}, `AGENT_NOT_FOUND: agent "x" is not registered`},
		{&core.BreadError{Code: core.CodeRunCancelled}, "RUN_CANCELLED"},
		{&core.BreadError{Code: core.CodeToolError, Message: "boom", Context: map[string]any{"k": 1}, Cause: io.EOF}, "TOOL_ERROR: boom"},
	}
	for _, tc := range cases {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestBreadErrorIsMatchesByCode(t *testing.T) {
	notFound := &core.BreadError{Code: core.CodeAgentNotFound, Message: `agent "x" is not registered`}
	wrapped := fmt.Errorf("handling request: %w", notFound)
	twice := fmt.Errorf("outer: %w", wrapped)
	cases := []struct {
		name   string
		err    error
		target error
		want   bool
	}{
		{"same code, other message", notFound, core.ErrAgentNotFound, true},
		{"other code", notFound, core.ErrTaskNotFound, false},
		{"through one wrap", wrapped, core.ErrAgentNotFound, true},
		{"through two wraps", twice, core.ErrAgentNotFound, true},
		{"through errors.Join", errors.Join(io.EOF, notFound), core.ErrAgentNotFound, true},
		{"sentinel to itself", core.ErrStoreClosed, core.ErrStoreClosed, true},
		{"sentinels of different codes", core.ErrStoreClosed, core.ErrStoreUnavailable, false},
		{"plain error", io.EOF, core.ErrAgentNotFound, false},
		{"nil target", notFound, (*core.BreadError)(nil), false},
		{"non-BreadError target", notFound, io.EOF, false},
		{"cause is seen", &core.BreadError{Code: core.CodeStoreError, Cause: fs.ErrNotExist}, fs.ErrNotExist, true},
		{"cause's code is seen", &core.BreadError{Code: core.CodeRemoteAgentError, Cause: notFound}, core.ErrAgentNotFound, true},
	}
	for _, tc := range cases {
		if got := errors.Is(tc.err, tc.target); got != tc.want {
			t.Errorf("%s: errors.Is = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSentinelsHaveDistinctCodes(t *testing.T) {
	sentinels := []*core.BreadError{
		core.ErrStoreNotConfigured, core.ErrNotStarted, core.ErrAgentNotFound, core.ErrPipelineNotFound,
		core.ErrTaskNotFound, core.ErrCheckpointNotFound, core.ErrSessionNotFound, core.ErrLoopNotFound,
		core.ErrTaskRunNotFound, core.ErrDocumentNotFound, core.ErrRunCancelled, core.ErrValidation,
		core.ErrProtocolDecode, core.ErrStoreUnavailable, core.ErrStoreClosed, core.ErrBusClosed,
		core.ErrQueueClosed, core.ErrBlobStoreClosed, core.ErrNotImplemented, core.ErrBlobStoreNotConfigured,
	}
	for i, a := range sentinels {
		if a.Code == "" {
			t.Errorf("sentinel %d has no code", i)
		}
		for j, b := range sentinels {
			if got := errors.Is(a, b); got != (i == j) {
				t.Errorf("errors.Is(%s, %s) = %v", a.Code, b.Code, got)
			}
		}
	}
}

func TestBreadErrorAsThroughWrapping(t *testing.T) {
	orig := &core.BreadError{Code: core.CodeCheckpointNotFound, Message: "no checkpoint ck1"}
	err := fmt.Errorf("resume: %w", fmt.Errorf("load: %w", orig))
	var be *core.BreadError
	if !errors.As(err, &be) {
		t.Fatal("errors.As found no *BreadError")
	}
	if be != orig {
		t.Errorf("errors.As found %p, want the original %p", be, orig)
	}
	var none *core.BreadError
	if errors.As(fmt.Errorf("x: %w", io.EOF), &none) {
		t.Errorf("errors.As matched a plain error: %v", none)
	}
}

func TestBreadErrorUnwrap(t *testing.T) {
	be := &core.BreadError{Code: core.CodeStoreError, Message: "read", Cause: io.ErrUnexpectedEOF}
	if got := be.Unwrap(); got != io.ErrUnexpectedEOF {
		t.Errorf("Unwrap() = %v, want io.ErrUnexpectedEOF", got)
	}
	if got := errors.Unwrap(be); got != io.ErrUnexpectedEOF {
		t.Errorf("errors.Unwrap = %v", got)
	}
	if got := (&core.BreadError{Code: "X"}).Unwrap(); got != nil {
		t.Errorf("Unwrap() without a cause = %v, want nil", got)
	}
}

func TestErrorf(t *testing.T) {
	t.Run("formats the message", func(t *testing.T) {
		be := core.Errorf(core.CodeAgentNotFound, "agent %q is not registered (%d agents)", "x", 3)
		eq(t, "Code", be.Code, core.CodeAgentNotFound)
		eq(t, "Message", be.Message, `agent "x" is not registered (3 agents)`)
		if be.Cause != nil {
			t.Errorf("Cause = %v, want nil without %%w", be.Cause)
		}
	})
	t.Run("%v of an error is no cause", func(t *testing.T) {
		be := core.Errorf(core.CodeStoreError, "read: %v", io.EOF)
		eq(t, "Message", be.Message, "read: EOF")
		if be.Cause != nil {
			t.Errorf("Cause = %v, want nil", be.Cause)
		}
	})
	t.Run("%w sets the cause", func(t *testing.T) {
		be := core.Errorf(core.CodeStoreError, "read crumb log: %w", io.ErrUnexpectedEOF)
		eq(t, "Message", be.Message, "read crumb log: unexpected EOF")
		if be.Cause != io.ErrUnexpectedEOF {
			t.Errorf("Cause = %v, want io.ErrUnexpectedEOF", be.Cause)
		}
		if !errors.Is(be, io.ErrUnexpectedEOF) {
			t.Error("errors.Is(be, io.ErrUnexpectedEOF) = false")
		}
		eq(t, "Error()", be.Error(), "STORE_ERROR: read crumb log: unexpected EOF")
	})
	t.Run("%w of a BreadError keeps both codes reachable", func(t *testing.T) {
		inner := core.Errorf(core.CodeCheckpointNotFound, "no checkpoint %s", "ck1")
		be := core.Errorf(core.CodeRemoteAgentError, "remote: %w", inner)
		if !errors.Is(be, core.ErrCheckpointNotFound) {
			t.Error("inner code not reachable")
		}
		var got *core.BreadError
		if !errors.As(be, &got) || got.Code != core.CodeRemoteAgentError {
			t.Errorf("errors.As found %v, want the outer error first", got)
		}
	})
	t.Run("two %w make both causes reachable", func(t *testing.T) {
		// fmt.Errorf with two %w wraps both; Errorf documents that %w sets
		// Cause "as fmt.Errorf would", so both must stay matchable.
		std := fmt.Errorf("a: %w, b: %w", io.EOF, fs.ErrNotExist)
		be := core.Errorf(core.CodeAggregateError, "a: %w, b: %w", io.EOF, fs.ErrNotExist)
		eq(t, "Message", be.Message, std.Error())
		for _, target := range []error{io.EOF, fs.ErrNotExist} {
			if errors.Is(std, target) && !errors.Is(be, target) {
				t.Errorf("errors.Is(Errorf(..%%w..%%w..), %v) = false, but true for fmt.Errorf", target)
			}
		}
	})
}

func TestBreadErrorWireJSON(t *testing.T) {
	cases := []struct {
		name string
		err  *core.BreadError
		want string
	}{
		{
			name: "full",
			err: &core.BreadError{Code: core.CodeToolError, Message: "gateway said no",
				Context: map[string]any{"toolName": "refund", "attempt": 2}, Cause: errors.New("secret upstream body")},
			want: `{"name":"BreadError","code":"TOOL_ERROR","message":"gateway said no","context":{"attempt":2,"toolName":"refund"}}`,
		},
		{
			name: "no context",
			err:  &core.BreadError{Code: core.CodeRunCancelled, Message: "the run was cancelled"},
			want: `{"name":"BreadError","code":"RUN_CANCELLED","message":"the run was cancelled"}`,
		},
		{
			name: "empty context",
			err:  &core.BreadError{Code: "X", Message: "m", Context: map[string]any{}},
			want: `{"name":"BreadError","code":"X","message":"m"}`,
		},
		{
			name: "empty message stays",
			err:  &core.BreadError{Code: "X"},
			want: `{"name":"BreadError","code":"X","message":""}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.err)
			if err != nil {
				t.Fatal(err)
			}
			eq(t, "JSON", string(got), tc.want)
			if strings.Contains(string(got), "cause") || strings.Contains(string(got), "secret") {
				t.Errorf("the cause leaked onto the wire: %s", got)
			}
			// Inside a struct, by pointer, the same shape.
			wrapped, _ := json.Marshal(struct {
				E *core.BreadError `json:"e"`
			}{tc.err})
			eq(t, "nested JSON", string(wrapped), `{"e":`+tc.want+`}`)
		})
	}
	nilJSON, err := json.Marshal(struct {
		E *core.BreadError `json:"e"`
	}{})
	if err != nil || string(nilJSON) != `{"e":null}` {
		t.Errorf("nil *BreadError field = %s, %v", nilJSON, err)
	}
}

func TestBreadErrorUnmarshalJSON(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want core.BreadError
	}{
		{"wire form", `{"name":"BreadError","code":"TOOL_ERROR","message":"boom","context":{"a":"b"}}`,
			core.BreadError{Code: "TOOL_ERROR", Message: "boom", Context: map[string]any{"a": "b"}}},
		{"missing code is AGENT_ERROR", `{"name":"BreadError","message":"boom"}`,
			core.BreadError{Code: core.CodeAgentError, Message: "boom"}},
		{"null code is AGENT_ERROR", `{"code":null,"message":"boom"}`,
			core.BreadError{Code: core.CodeAgentError, Message: "boom"}},
		{"empty code is AGENT_ERROR", `{"code":"","message":"boom"}`,
			core.BreadError{Code: core.CodeAgentError, Message: "boom"}},
		{"missing name is fine", `{"code":"X","message":"m"}`, core.BreadError{Code: "X", Message: "m"}},
		{"another name is ignored", `{"name":"TypeError","code":"X","message":"m"}`, core.BreadError{Code: "X", Message: "m"}},
		{"unknown fields ignored", `{"code":"X","message":"m","stack":"at foo","cause":{"x":1}}`, core.BreadError{Code: "X", Message: "m"}},
		{"empty object", `{}`, core.BreadError{Code: core.CodeAgentError}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Start from a dirty value: unmarshal must replace it whole.
			got := core.BreadError{Code: "OLD", Message: "old", Context: map[string]any{"old": 1}, Cause: io.EOF}
			if err := json.Unmarshal([]byte(tc.in), &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
	for _, bad := range []string{`"boom"`, `[]`, `{"code":5}`, `{"message":{}}`, `{"context":[]}`, `{`} {
		var be core.BreadError
		if err := json.Unmarshal([]byte(bad), &be); err == nil {
			t.Errorf("Unmarshal(%s) succeeded: %#v", bad, be)
		}
	}
}

func TestBreadErrorJSONRoundTrip(t *testing.T) {
	orig := &core.BreadError{Code: core.CodeRateLimited, Message: "429",
		Context: map[string]any{"provider": "openai", "retries": 3.0, "ids": []any{"a"}, "nested": map[string]any{"ok": true}},
		Cause:   errors.New("dropped")}
	b, err := json.Marshal(orig)
	if err != nil {
		t.Fatal(err)
	}
	var back core.BreadError
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	want := *orig
	want.Cause = nil
	if !reflect.DeepEqual(back, want) {
		t.Errorf("round trip = %#v, want %#v", back, want)
	}
}

func TestWithContextCopies(t *testing.T) {
	orig := &core.BreadError{Code: core.CodeToolError, Message: "boom", Context: map[string]any{"a": 1}, Cause: io.EOF}
	before := maps.Clone(orig.Context)

	got := orig.WithContext("b", 2)
	if got == orig {
		t.Fatal("WithContext returned the receiver")
	}
	if !reflect.DeepEqual(got.Context, map[string]any{"a": 1, "b": 2}) {
		t.Errorf("copy's context = %v", got.Context)
	}
	eq(t, "Code", got.Code, orig.Code)
	eq(t, "Message", got.Message, orig.Message)
	if got.Cause != io.EOF {
		t.Errorf("copy lost its cause: %v", got.Cause)
	}
	if !reflect.DeepEqual(orig.Context, before) {
		t.Errorf("original context changed to %v", orig.Context)
	}

	// Overwriting a key, and writing to the copy afterwards, leaves the
	// original alone: the maps are not shared.
	over := orig.WithContext("a", "replaced")
	over.Context["c"] = 3
	if !reflect.DeepEqual(orig.Context, before) {
		t.Errorf("original context changed to %v", orig.Context)
	}

	// A sentinel with no context can be decorated without touching it.
	dec := core.ErrAgentNotFound.WithContext("agentId", "x")
	if core.ErrAgentNotFound.Context != nil {
		t.Errorf("sentinel mutated: %v", core.ErrAgentNotFound.Context)
	}
	if !errors.Is(dec, core.ErrAgentNotFound) || dec.Context["agentId"] != "x" {
		t.Errorf("decorated sentinel = %#v", dec)
	}
}

func TestWithCauseCopies(t *testing.T) {
	orig := &core.BreadError{Code: core.CodeStoreError, Message: "m", Context: map[string]any{"a": 1}}
	got := orig.WithCause(io.EOF)
	if got == orig || orig.Cause != nil {
		t.Fatalf("WithCause changed the receiver: %#v", orig)
	}
	if !errors.Is(got, io.EOF) || got.Code != orig.Code || got.Message != orig.Message {
		t.Errorf("WithCause = %#v", got)
	}
}

func TestSanitize(t *testing.T) {
	secret := errors.New(`dial tcp 10.0.0.7:5432: password "hunter2" rejected`)
	be := &core.BreadError{Code: core.CodeToolError, Message: "tool failed",
		Context: map[string]any{"path": "/etc/secret"}, Cause: secret}
	cases := []struct {
		name string
		err  error
		want core.ClientError
	}{
		{"BreadError keeps code and message", be, core.ClientError{Code: core.CodeToolError, Message: "tool failed"}},
		{"wrapped BreadError", fmt.Errorf("handler: %w", be), core.ClientError{Code: core.CodeToolError, Message: "tool failed"}},
		{"sentinel", core.ErrAgentNotFound, core.ClientError{Code: core.CodeAgentNotFound}},
		{"errors.Join of plain errors", errors.Join(secret, io.EOF),
			core.ClientError{Code: core.CodeAggregateError, Message: "multiple operations failed"}},
		{"fmt.Errorf with two %w", fmt.Errorf("%w; %w", secret, io.EOF),
			core.ClientError{Code: core.CodeAggregateError, Message: "multiple operations failed"}},
		{"errors.Join of one error", errors.Join(secret),
			core.ClientError{Code: core.CodeInternalError, Message: "internal server error"}},
		{"plain error", secret, core.ClientError{Code: core.CodeInternalError, Message: "internal server error"}},
		{"wrapped plain error", fmt.Errorf("query: %w", secret),
			core.ClientError{Code: core.CodeInternalError, Message: "internal server error"}},
		{"context.Canceled", context.Canceled, core.ClientError{Code: core.CodeInternalError, Message: "internal server error"}},
		{"AsBreadError of a plain error", core.AsBreadError(secret, core.CodeToolError),
			core.ClientError{Code: core.CodeInternalError, Message: "internal server error"}},
		{"AsBreadError of joined plain errors", fmt.Errorf("step: %w", core.AsBreadError(errors.Join(secret, io.EOF), core.CodeTaskError)),
			core.ClientError{Code: core.CodeAggregateError, Message: "multiple operations failed"}},
		{"a message of its own over a plain cause", core.Errorf(core.CodeToolError, "the lookup failed").WithCause(secret),
			core.ClientError{Code: core.CodeToolError, Message: "the lookup failed"}},
		{"nil *BreadError", (*core.BreadError)(nil), core.ClientError{Code: core.CodeInternalError, Message: "internal server error"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := core.Sanitize(tc.err)
			if got != tc.want {
				t.Errorf("Sanitize = %+v, want %+v", got, tc.want)
			}
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			for _, leak := range []string{"hunter2", "10.0.0.7", "/etc/secret", "context", "cause"} {
				if strings.Contains(string(b), leak) || strings.Contains(got.Error(), leak) {
					t.Errorf("client error leaks %q: %s", leak, b)
				}
			}
			if keys := topLevelKeys(t, b); !reflect.DeepEqual(keys, []string{"code", "message"}) {
				t.Errorf("client error JSON keys = %v, want [code message]", keys)
			}
		})
	}
}

func TestClientErrorString(t *testing.T) {
	eq(t, "Error()", core.ClientError{Code: "X", Message: "m"}.Error(), "X: m")
}

func TestAsBreadError(t *testing.T) {
	be := &core.BreadError{Code: core.CodeToolError, Message: "boom"}
	plain := errors.New("disk full")

	if got := core.AsBreadError(nil, core.CodeInternalError); got != nil {
		t.Errorf("AsBreadError(nil) = %#v, want nil", got)
	}
	if got := core.AsBreadError(be, core.CodeInternalError); got != be {
		t.Errorf("AsBreadError(be) = %p, want the same pointer %p", got, be)
	}
	if got := core.AsBreadError(fmt.Errorf("outer: %w", be), core.CodeInternalError); got != be {
		t.Errorf("AsBreadError(wrapped be) = %#v, want the inner error", got)
	}

	cases := []struct {
		name     string
		err      error
		code     string
		message  string
		wrapsErr error
	}{
		{"context.Canceled", context.Canceled, core.CodeRunCancelled, "the run was cancelled", context.Canceled},
		{"wrapped Canceled", fmt.Errorf("stream: %w", context.Canceled), core.CodeRunCancelled, "the run was cancelled", context.Canceled},
		{"DeadlineExceeded", context.DeadlineExceeded, core.CodeRunCancelled, "the run's deadline passed", context.DeadlineExceeded},
		{"plain error takes the fallback", plain, core.CodeStoreError, "disk full", plain},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := core.AsBreadError(tc.err, core.CodeStoreError)
			if got == nil {
				t.Fatal("nil")
			}
			eq(t, "Code", got.Code, tc.code)
			eq(t, "Message", got.Message, tc.message)
			if !errors.Is(got, tc.wrapsErr) {
				t.Errorf("result does not wrap %v", tc.wrapsErr)
			}
		})
	}

	// A context whose cancellation is observed through ctx.Err().
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := core.AsBreadError(ctx.Err(), core.CodeAgentError); !errors.Is(got, core.ErrRunCancelled) {
		t.Errorf("AsBreadError(ctx.Err()) = %v, want RUN_CANCELLED", got)
	}
}

func TestClientSafe(t *testing.T) {
	orig := &core.BreadError{Code: core.CodeProviderAuth, Message: "bad key",
		Context: map[string]any{"apiKeyPrefix": "sk-abc"}, Cause: errors.New("401 body")}
	got := orig.ClientSafe()
	if got == orig {
		t.Fatal("ClientSafe returned the receiver")
	}
	want := &core.BreadError{Code: core.CodeProviderAuth, Message: "bad key"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ClientSafe = %#v, want %#v", got, want)
	}
	if orig.Context == nil || orig.Cause == nil {
		t.Error("ClientSafe modified the original")
	}
	b, _ := json.Marshal(got)
	eq(t, "wire", string(b), `{"name":"BreadError","code":"PROVIDER_AUTH","message":"bad key"}`)
	if got := (*core.BreadError)(nil).ClientSafe(); got != nil {
		t.Errorf("nil.ClientSafe() = %#v, want nil", got)
	}
	plain := core.AsBreadError(errors.New("dial postgres://app:hunter2@db"), core.CodeToolError)
	if got := plain.ClientSafe(); got.Code != core.CodeInternalError || strings.Contains(got.Message, "hunter2") {
		t.Errorf("ClientSafe of a plain error's text = %#v, want core.Sanitize's", got)
	}
}
