package enginetest_test

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/transports/httpstream"
)

// One route, both formats: the Accept header alone decides.
func TestEveryStreamingRouteServesBothFormats(t *testing.T) {
	e := newEnv(t, setup{
		turns: []modeltest.Turn{modeltest.Text("Bread ", "is ", "good."), modeltest.Text("Bread ", "is ", "good.")},
		cfg:   engine.Config{Pipelines: map[string][]core.PipelineStep{"one": {{Type: core.StepAgent, AgentID: "writer"}}}},
	})
	accepts := []struct {
		accept string // "" sends none
		want   string
	}{
		{"", httpstream.ContentTypeNDJSON},
		{"*/*", httpstream.ContentTypeNDJSON},
		{"application/x-ndjson", httpstream.ContentTypeNDJSON},
		{"text/event-stream", httpstream.ContentTypeSSE},
		{"text/event-stream;q=0", httpstream.ContentTypeNDJSON},
		{"application/x-ndjson;q=0.5, text/event-stream", httpstream.ContentTypeSSE},
	}
	var runID string
	for _, a := range accepts {
		var hdr []string
		if a.accept != "" {
			hdr = []string{"Accept", a.accept}
		}
		s := e.open(t, "POST", "/agents/writer/run", `{"input":"hi"}`, hdr...)
		if ct := s.res.Header.Get("Content-Type"); ct != a.want || s.res.Header.Get("Vary") != "Accept" {
			t.Fatalf("Accept %q: Content-Type %q, Vary %q", a.accept, ct, s.res.Header.Get("Vary"))
		}
		fs := s.rest()
		if types(fs) != "agent:run:start,text:delta,text:delta,text:delta,agent:run:end" || text(fs) != "Bread is good." {
			t.Fatalf("Accept %q: %s %q", a.accept, types(fs), text(fs))
		}
		if s.sse && s.retry != "3000" {
			t.Fatalf("an SSE stream opens with retry: 3000, got %q", s.retry)
		}
		runID = fs[0].RunID
		// The passive stream of the same run, in the same format.
		p := e.open(t, "GET", "/runs/"+runID+"/stream", "", hdr...)
		if ct := p.res.Header.Get("Content-Type"); ct != a.want || p.res.Header.Get("Vary") != "Accept" {
			t.Fatalf("passive, Accept %q: Content-Type %q", a.accept, ct)
		}
		if got := types(p.rest()); got != "agent:run:start,text:delta,agent:run:end" {
			t.Fatalf("passive, Accept %q: %s", a.accept, got)
		}
	}
	for _, a := range []string{"text/event-stream", "application/x-ndjson"} {
		for _, path := range []string{"/pipelines/one/run", "/resume/ghost"} {
			h := e.open(t, "POST", path, `{"input":"hi"}`, "Accept", a).res.Header
			if h.Get("Content-Type") != a || h.Get("Vary") != "Accept" {
				t.Fatalf("%s, Accept %s: %s, Vary %q", path, a, h.Get("Content-Type"), h.Get("Vary"))
			}
		}
	}
	// Refusals before a stream opens are JSON in both cases, and vary too.
	bad := e.open(t, "GET", "/runs/"+runID+"/stream?after=x", "", "Accept", "text/event-stream")
	if bad.res.StatusCode != 400 || bad.res.Header.Get("Content-Type") != "application/json" || bad.res.Header.Get("Vary") != "Accept" {
		t.Fatalf("bad after= with SSE: %d %q", bad.res.StatusCode, bad.res.Header.Get("Content-Type"))
	}
}

func TestSSEWire(t *testing.T) {
	e := newEnv(t, setup{})
	s := e.open(t, "POST", "/agents/writer/run", `{"input":"hi"}`, "Accept", "text/event-stream")
	raw, err := io.ReadAll(s.res.Body)
	if err != nil {
		t.Fatal(err)
	}
	events := strings.Split(strings.TrimSuffix(string(raw), "\n\n"), "\n\n")
	if len(events) != 11 || events[0] != "retry: 3000" {
		t.Fatalf("events %q", events)
	}
	// Each id stands alone before its event's data, so the data block is
	// nothing but "data: " and JSON (the seed's fetch example parses it so).
	if events[1] != "id: 1" || !strings.HasPrefix(events[2], "data: {\"type\":\"agent:run:start\",\"payload\":{\"type\":\"agent:run:start\"") {
		t.Fatalf("run start event %q", events[1:3])
	}
	// Deltas repeat the last durable id: a watermark.
	if events[3] != "id: 1" || !strings.HasPrefix(events[4], "data: {\"type\":\"text:delta\",\"payload\":{") ||
		events[9] != "id: 3" || !strings.HasPrefix(events[10], "data: {\"type\":\"agent:run:end\"") {
		t.Fatalf("events %q", events)
	}
	for _, ev := range events[1:] {
		if data, ok := strings.CutPrefix(ev, "data: "); ok && !json.Valid([]byte(data)) {
			t.Fatalf("a data block is not JSON alone: %q", ev)
		}
	}
}

func TestFailuresInBothFormats(t *testing.T) {
	e := newEnv(t, setup{turns: []modeltest.Turn{
		modeltest.Fail(&core.BreadError{Code: core.CodeProviderError, Message: "upstream", Context: map[string]any{"key": "sk-1"}}, "par"),
		modeltest.Fail(&core.BreadError{Code: core.CodeProviderError, Message: "upstream", Context: map[string]any{"key": "sk-1"}}, "par"),
	}})
	read := func(path, body, accept string) string {
		t.Helper()
		s := e.open(t, "POST", path, body, "Accept", accept)
		b, err := io.ReadAll(s.res.Body)
		if err != nil || s.res.StatusCode != 200 {
			t.Fatalf("%s: %d %v", path, s.res.StatusCode, err)
		}
		return string(b)
	}
	for _, c := range []struct{ path, body, code string }{
		{"/agents/writer/run", `{"input":`, core.CodeBadRequest},
		{"/agents/ghost/run", `{}`, core.CodeAgentNotFound},
		{"/pipelines/ghost/run", `{"input":{}}`, core.CodePipelineNotFound},
	} {
		// NDJSON: a synthetic agent:error frame, with no run.
		nd := read(c.path, c.body, "application/x-ndjson")
		want := `{"v":1,"type":"crumb","runId":"","seq":0,"crumb":{"type":"agent:error",`
		if !strings.HasPrefix(nd, want) || !strings.Contains(nd, `"code":"`+c.code+`"`) || strings.Count(nd, "\n") != 1 {
			t.Fatalf("NDJSON %s = %q", c.path, nd)
		}
		// SSE: the error event alone.
		sse := read(c.path, c.body, "text/event-stream")
		want = "retry: 3000\n\ndata: {\"type\":\"error\",\"payload\":{\"code\":\"" + c.code + "\",\"message\":"
		if !strings.HasPrefix(sse, want) || strings.Count(sse, "data:") != 1 {
			t.Fatalf("SSE %s = %q", c.path, sse)
		}
	}
	// A run that fails after it started: NDJSON ends with its agent:error
	// frame; SSE sends that crumb, then the error event. Never the context.
	nd := read("/agents/writer/run", `{"input":"hi"}`, "")
	if !strings.Contains(nd, `"crumb":{"type":"agent:error"`) || !strings.Contains(nd, core.CodeProviderError) || strings.Contains(nd, "sk-1") {
		t.Fatalf("failed run, NDJSON: %q", nd)
	}
	sse := read("/agents/writer/run", `{"input":"hi"}`, "text/event-stream")
	i := strings.Index(sse, `data: {"type":"agent:error"`)
	j := strings.Index(sse, `data: {"type":"error","payload":{"code":"PROVIDER_ERROR"`)
	if i < 0 || j < i || strings.Contains(sse, "sk-1") {
		t.Fatalf("failed run, SSE: %q", sse)
	}
}

// Two clients tail one run at once, one per format: both see every durable
// crumb once and the whole text.
func TestBothFormatsTailTheSameRunConcurrently(t *testing.T) {
	turn, full := slowText(80)
	e := newEnv(t, setup{turns: []modeltest.Turn{turn}, cfg: engine.Config{CrumbLog: engine.CrumbLogOptions{MaxBufferBytes: 64}}})
	id, run := e.start(t, `{"input":"hi"}`)
	defer run.close()
	var wg sync.WaitGroup
	got := map[string][]core.Frame{}
	var mu sync.Mutex
	for _, accept := range []string{"application/x-ndjson", "text/event-stream", "application/x-ndjson", "text/event-stream"} {
		s := e.open(t, "GET", "/runs/"+id+"/stream", "", "Accept", accept)
		if s.res.Header.Get("Content-Type") != accept {
			t.Fatalf("Accept %s got %s", accept, s.res.Header.Get("Content-Type"))
		}
		wg.Go(func() {
			fs := s.rest()
			mu.Lock()
			got[accept] = append(got[accept], fs...)
			mu.Unlock()
		})
	}
	wg.Wait()
	for accept, fs := range got {
		// Two tails per format: split them back at each agent:run:start.
		var one []core.Frame
		for i, f := range fs {
			if f.Crumb.CrumbType() == core.TypeAgentRunStart && i > 0 {
				checkAtLeastOnce(t, one, full)
				one = nil
			}
			one = append(one, f)
		}
		checkAtLeastOnce(t, one, full)
		if last := fs[len(fs)-1]; last.Crumb.CrumbType() != core.TypeAgentRunEnd || last.RunID != id {
			t.Fatalf("%s tail ends with %s", accept, last.Crumb.CrumbType())
		}
	}
}

func TestSSEPassiveStreamCatchUpAndPing(t *testing.T) {
	reached := make(chan struct{})
	e := newEnv(t, setup{opts: httpstream.Options{Heartbeat: 10 * time.Millisecond}, turns: []modeltest.Turn{modeltest.Block(reached, "partial ")}})
	id, run := e.start(t, `{"input":"hi"}`)
	defer run.close()
	<-reached
	waitLogged(t, e.store, id, func(le core.CrumbLogEntry) bool { return le.Type == core.TypeAgentRunStart })
	s := e.open(t, "GET", "/runs/"+id+"/stream", "", "Accept", "text/event-stream")
	f, ok := s.next()
	if !ok || f.Crumb.CrumbType() != core.TypeAgentRunStart || f.Seq != 1 {
		t.Fatalf("first event %+v", f)
	}
	for s.beat < 3 {
		if !s.sc.Scan() {
			t.Fatal("the SSE tail ended while the run was idle")
		}
		switch line := s.sc.Text(); line {
		case ": ping":
			s.beat++
		case "":
		default:
			if !strings.HasPrefix(line, "id: 1") && !strings.HasPrefix(line, `data: {"type":"text:delta"`) {
				t.Fatalf("unexpected line while the run is idle: %q", line)
			}
		}
	}
	s.close()
	// Last-Event-ID: the event after it only.
	p := e.open(t, "GET", "/runs/"+id+"/stream", "", "Accept", "text/event-stream", "Last-Event-ID", strconv.Itoa(1))
	go func() { time.Sleep(50 * time.Millisecond); run.close() }()
	rest := p.rest()
	if len(rest) == 0 || rest[0].Crumb.CrumbType() == core.TypeAgentRunStart {
		t.Fatalf("after Last-Event-ID 1: %s", types(rest))
	}
	if last := rest[len(rest)-1]; errorCode(last.Crumb) != core.CodeRunCancelled {
		t.Fatalf("the tail ends with the cancelled run's agent:error: %s", types(rest))
	}
}
