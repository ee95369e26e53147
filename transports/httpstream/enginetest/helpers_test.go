package enginetest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/core/protocol"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/transports/httpstream"
	"github.com/breadai/bread/transports/httpstream/streamtest"
)

type env struct {
	inst    *engine.Instance
	store   *core.Storage
	ingress *httpstream.Ingress
	ts      *httptest.Server
}

type setup struct {
	cfg   engine.Config
	opts  httpstream.Options
	bus   core.BreadBus // the engine's bus; nil is the in-process one
	turns []modeltest.Turn
	// middleware wraps the mounted routes (the first is outermost).
	middleware []func(http.Handler) http.Handler
}

// newEnv starts an engine with a scripted "writer" agent and serves an
// Ingress for it on a plain net/http router (streamtest), without the
// server module.
func newEnv(t *testing.T, s setup) *env {
	t.Helper()
	e := &env{ingress: httpstream.New(s.opts)}
	if s.cfg.Store == nil {
		s.cfg.Store = memory.New()
	}
	e.store = core.NewStorage(s.cfg.Store)
	s.cfg.Store = e.store
	if len(s.turns) == 0 {
		s.turns = []modeltest.Turn{modeltest.Text("Bread ", "is ", "good.")}
	}
	model := modeltest.New(s.turns...)
	s.cfg.Providers = model.Registry("scripted")
	s.cfg.Agents = append(s.cfg.Agents, &core.Agent{ID: "writer", Model: core.ModelRef{Provider: "scripted", Model: "m"}})
	s.cfg.Bus = s.bus
	inst, err := engine.New(s.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inst.Stop(context.Background()) })
	e.inst = inst
	e.ts = streamtest.Serve(t, e.ingress, inst, s.middleware...)
	return e
}

// identity is middleware that trusts X-Identity as the caller's subject,
// as an auth strategy would store it.
func identity(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s := r.Header.Get("X-Identity"); s != "" {
			r = r.WithContext(core.WithIdentity(r.Context(), &core.AuthIdentity{Subject: s}))
		}
		next.ServeHTTP(w, r)
	})
}

// stream is an open streamed response read frame by frame, in either
// format (by its Content-Type).
type stream struct {
	t         *testing.T
	res       *http.Response
	sc        *bufio.Scanner
	sse       bool
	beat      int // heartbeats seen
	retry     string
	errEvents []core.ClientError // SSE error events seen
}

func (e *env) open(t *testing.T, method, path, body string, hdr ...string) *stream {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.ts.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	return &stream{t: t, res: res, sc: sc, sse: res.Header.Get("Content-Type") == httpstream.ContentTypeSSE}
}

// next returns the next frame, or false at the end of the response. An SSE
// error event comes back as an agent:error crumb without a run, and is
// recorded in errEvents.
func (s *stream) next() (core.Frame, bool) {
	s.t.Helper()
	if s.sse {
		return s.nextEvent()
	}
	for s.sc.Scan() {
		if len(s.sc.Bytes()) == 0 {
			s.beat++
			continue
		}
		f, err := protocol.DecodeCrumbFrame(s.sc.Bytes())
		if err != nil {
			s.t.Fatalf("bad line %q: %v", s.sc.Bytes(), err)
		}
		return f, true
	}
	if err := s.sc.Err(); err != nil {
		s.t.Fatalf("stream read: %v", err)
	}
	return core.Frame{}, false
}

func (s *stream) nextEvent() (core.Frame, bool) {
	s.t.Helper()
	var seq int64
	var data string
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case line == "":
			if data == "" {
				continue // an id's own block: the id is the next event's
			}
			var ev struct {
				Type    string          `json:"type"`
				Payload json.RawMessage `json:"payload"`
			}
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				s.t.Fatalf("bad event data %q: %v", data, err)
			}
			if ev.Type == httpstream.SSEErrorEvent {
				var ce core.ClientError
				if err := json.Unmarshal(ev.Payload, &ce); err != nil || ce.Code == "" {
					s.t.Fatalf("bad error event %q", data)
				}
				s.errEvents = append(s.errEvents, ce)
				return core.Frame{Crumb: &core.AgentError{Error: &core.BreadError{Code: ce.Code, Message: ce.Message}}}, true
			}
			c, err := core.DecodeCrumb(ev.Payload)
			if err != nil || c.CrumbType() != ev.Type {
				s.t.Fatalf("bad crumb event %q: %v", data, err)
			}
			return core.Frame{RunID: c.Base().RunID, Seq: seq, Crumb: c}, true
		case line == ": ping":
			s.beat++
		case strings.HasPrefix(line, "retry: "):
			s.retry = line[len("retry: "):]
		case strings.HasPrefix(line, "id: "):
			n, err := strconv.ParseInt(line[len("id: "):], 10, 64)
			if err != nil {
				s.t.Fatalf("bad id line %q", line)
			}
			seq = n
		case strings.HasPrefix(line, "data: "):
			if data != "" {
				s.t.Fatalf("an event with two data lines: %q", line)
			}
			data = line[len("data: "):]
		default:
			s.t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if err := s.sc.Err(); err != nil {
		s.t.Fatalf("stream read: %v", err)
	}
	if data != "" {
		s.t.Fatalf("the stream ended inside an event: %q", data)
	}
	return core.Frame{}, false
}

// rest reads frames to the end of the response.
func (s *stream) rest() []core.Frame {
	s.t.Helper()
	var out []core.Frame
	for {
		f, ok := s.next()
		if !ok {
			return out
		}
		out = append(out, f)
	}
}

func (s *stream) close() { s.res.Body.Close() }

func types(fs []core.Frame) string {
	var b []string
	for _, f := range fs {
		b = append(b, f.Crumb.CrumbType())
	}
	return strings.Join(b, ",")
}

func text(fs []core.Frame) string {
	var b strings.Builder
	for _, f := range fs {
		if d, ok := f.Crumb.(*core.TextDelta); ok {
			b.WriteString(d.Delta)
		}
	}
	return b.String()
}

// checkAtLeastOnce asserts the dedup contract: every durable crumb once and
// in seq order, and the text without a gap: each delta either continues the
// text or repeats part of it (a delta window seen again after a reconnect)
// before continuing it.
func checkAtLeastOnce(t *testing.T, got []core.Frame, full string) {
	t.Helper()
	var last int64
	pos := 0
	for _, f := range got {
		if d, ok := f.Crumb.(*core.TextDelta); ok {
			k := strings.LastIndex(full[:min(pos+len(d.Delta), len(full))], d.Delta)
			if k < 0 || k > pos {
				t.Fatalf("delta %q at text position %d leaves a gap or is foreign (%s)", d.Delta, pos, types(got))
			}
			pos = max(pos, k+len(d.Delta))
			continue
		}
		if core.IsDelta(f.Crumb.CrumbType()) {
			continue
		}
		if f.Seq <= last {
			t.Fatalf("durable crumb %s seq %d after %d: duplicate or out of order (%s)", f.Crumb.CrumbType(), f.Seq, last, types(got))
		}
		last = f.Seq
	}
	if pos != len(full) {
		t.Fatalf("text stops at %d of %d: %q", pos, len(full), text(got))
	}
}

// runID starts a run over the API and returns its run id and the open
// stream.
func (e *env) start(t *testing.T, body string) (string, *stream) {
	t.Helper()
	s := e.open(t, "POST", "/agents/writer/run", body)
	f, ok := s.next()
	if !ok || f.Crumb.CrumbType() != core.TypeAgentRunStart {
		t.Fatalf("first frame %+v", f)
	}
	return f.RunID, s
}

// waitLogged polls the crumb log until pred holds for some entry.
func waitLogged(t *testing.T, clog *core.Storage, runID string, pred func(core.CrumbLogEntry) bool) core.CrumbLogEntry {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		entries, err := clog.GetCrumbs(context.Background(), runID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if pred(e) {
				return e
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no matching crumb logged for run %s", runID)
	return core.CrumbLogEntry{}
}

func errorCode(c core.Crumb) string {
	if ae, ok := c.(*core.AgentError); ok && ae.Error != nil {
		return ae.Error.Code
	}
	return ""
}

var errNope = errors.New("nope")

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
