package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/breadai/bread/core"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The standard library keeps these for the life of the process.
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		// A dependency of Google's auth library starts this worker in init.
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
	)
}

// recorded is one request the fake vendor received.
type recorded struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
}

func (r recorded) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, r.Body)
	}
	return m
}

// reply is what the fake vendor answers.
type reply struct {
	status      int
	header      map[string]string
	contentType string
	body        []byte
	// cutAfter, when > 0, sends that many body bytes and then drops the
	// connection without finishing the response.
	cutAfter int
}

// fakeVendor is an httptest server that records requests and replays a
// canned reply, the way the real API would send it.
type fakeVendor struct {
	*httptest.Server
	mu       sync.Mutex
	requests []recorded
	reply    reply
	client   *http.Client
	counter  *countingTransport
}

func newFakeVendor(t *testing.T, rep reply, tls bool) *fakeVendor {
	t.Helper()
	fv := &fakeVendor{reply: rep}
	h := http.HandlerFunc(fv.serve)
	if tls {
		fv.Server = httptest.NewTLSServer(h)
	} else {
		fv.Server = httptest.NewServer(h)
	}
	base := fv.Server.Client().Transport.(*http.Transport).Clone()
	fv.counter = &countingTransport{base: base}
	fv.client = &http.Client{Transport: fv.counter}
	t.Cleanup(func() {
		fv.Server.Close()
		base.CloseIdleConnections()
		if n := fv.counter.open.Load(); n != 0 {
			t.Errorf("%d response bodies were never closed", n)
		}
	})
	return fv
}

func (fv *fakeVendor) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	fv.mu.Lock()
	fv.requests = append(fv.requests, recorded{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	rep := fv.reply
	fv.mu.Unlock()
	if rep.contentType != "" {
		w.Header().Set("Content-Type", rep.contentType)
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	status := rep.status
	if status == 0 {
		status = http.StatusOK
	}
	if rep.cutAfter > 0 && rep.cutAfter < len(rep.body) {
		w.WriteHeader(status)
		_, _ = w.Write(rep.body[:rep.cutAfter])
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write(rep.body)
}

func (fv *fakeVendor) last(t *testing.T) recorded {
	t.Helper()
	fv.mu.Lock()
	defer fv.mu.Unlock()
	if len(fv.requests) == 0 {
		t.Fatal("the fake vendor received no request")
	}
	return fv.requests[len(fv.requests)-1]
}

// countingTransport counts response bodies still open, so a test can
// prove every connection was released.
type countingTransport struct {
	base http.RoundTripper
	open atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if resp != nil && resp.Body != nil {
		c.open.Add(1)
		resp.Body = &countedBody{ReadCloser: resp.Body, open: &c.open}
	}
	return resp, err
}

type countedBody struct {
	io.ReadCloser
	open *atomic.Int64
	once sync.Once
}

func (b *countedBody) Close() error {
	b.once.Do(func() { b.open.Add(-1) })
	return b.ReadCloser.Close()
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// collect ranges over a stream and returns its events and final error.
func collect(t *testing.T, seq func(func(core.ModelEvent, error) bool)) ([]core.ModelEvent, error) {
	t.Helper()
	var evs []core.ModelEvent
	for ev, err := range seq {
		if err != nil {
			if ev.Type != "" {
				t.Errorf("an error came with a non-zero event %+v", ev)
			}
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// text joins the deltas of one type.
func joined(evs []core.ModelEvent, typ core.ModelEventType) string {
	var b bytes.Buffer
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

// checkContract asserts the event-order rules of the model port: each
// tool call is start, deltas, end, call; exactly one finish, last.
func checkContract(t *testing.T, evs []core.ModelEvent) {
	t.Helper()
	state := map[string]string{}
	finishes := 0
	for i, e := range evs {
		switch e.Type {
		case core.EventToolInputStart:
			if state[e.ToolCallID] != "" {
				t.Errorf("event %d: second tool-input-start for %s", i, e.ToolCallID)
			}
			state[e.ToolCallID] = "open"
		case core.EventToolInputDelta:
			if state[e.ToolCallID] != "open" {
				t.Errorf("event %d: tool-input-delta for %s outside start/end", i, e.ToolCallID)
			}
		case core.EventToolInputEnd:
			if state[e.ToolCallID] != "open" {
				t.Errorf("event %d: tool-input-end for %s not after start", i, e.ToolCallID)
			}
			state[e.ToolCallID] = "ended"
		case core.EventToolCall:
			if s := state[e.ToolCallID]; s != "ended" && s != "" {
				t.Errorf("event %d: tool-call for %s in state %q", i, e.ToolCallID, s)
			}
			state[e.ToolCallID] = "called"
			if !json.Valid(e.Input) {
				t.Errorf("event %d: tool-call input is not JSON: %s", i, e.Input)
			}
		case core.EventFinish:
			finishes++
			if i != len(evs)-1 {
				t.Errorf("finish is event %d of %d, not the last", i, len(evs))
			}
		}
	}
	for id, s := range state {
		if s != "called" {
			t.Errorf("tool call %s ended in state %q", id, s)
		}
	}
	if finishes != 1 {
		t.Errorf("%d finish events, want 1", finishes)
	}
}

func wantCode(t *testing.T, err error, code string) *core.BreadError {
	t.Helper()
	var be *core.BreadError
	if !errors.As(err, &be) {
		t.Fatalf("error %v (%T) is not a BreadError", err, err)
	}
	if be.Code != code {
		t.Fatalf("code %s, want %s (%s)", be.Code, code, be.Message)
	}
	return be
}

func env(m map[string]string) Getenv { return func(k string) string { return m[k] } }

func ptr[T any](v T) *T { return &v }

// consumeFirst reads one event then stops ranging, to prove an early stop
// releases the connection.
func consumeFirst(seq func(func(core.ModelEvent, error) bool)) {
	for range seq {
		break
	}
}

var _ = context.Background

// streamCase is one recorded stream and what a model must make of it.
type streamCase struct {
	fixture, text, reasoning string
	calls                    map[string]string // tool call id -> input JSON
	reason                   core.FinishReason
}

// check asserts evs against the case: the event contract, the joined text
// and reasoning, each tool call's input by id, and the finish reason.
func (tc streamCase) check(t *testing.T, evs []core.ModelEvent) {
	t.Helper()
	checkContract(t, evs)
	if got := joined(evs, core.EventTextDelta); got != tc.text {
		t.Errorf("text %q", got)
	}
	if got := joined(evs, core.EventReasoningDelta); got != tc.reasoning {
		t.Errorf("reasoning %q", got)
	}
	calls := ofType(evs, core.EventToolCall)
	if len(calls) != len(tc.calls) {
		t.Fatalf("calls %+v", calls)
	}
	for _, c := range calls {
		if string(c.Input) != tc.calls[c.ToolCallID] {
			t.Errorf("call %s input %s", c.ToolCallID, c.Input)
		}
	}
	if fin := evs[len(evs)-1]; fin.FinishReason != tc.reason {
		t.Errorf("finish %v", fin.FinishReason)
	}
}
