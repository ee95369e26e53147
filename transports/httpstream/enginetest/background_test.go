package enginetest_test

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

type accepted struct {
	status   int
	location string
	body     []byte
	run      core.Detached
	err      core.ClientError
}

// post sends a run request and reads its whole (non-streamed) answer.
func (e *env) post(t *testing.T, path, body string, hdr ...string) accepted {
	t.Helper()
	req, err := http.NewRequest("POST", e.ts.URL+path, strings.NewReader(body))
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
	defer res.Body.Close()
	a := accepted{status: res.StatusCode, location: res.Header.Get("Location")}
	a.body, _ = io.ReadAll(res.Body)
	if a.status == http.StatusAccepted {
		if err := json.Unmarshal(a.body, &a.run); err != nil {
			t.Fatalf("202 body %q: %v", a.body, err)
		}
	} else {
		var b struct{ Error core.ClientError }
		_ = json.Unmarshal(a.body, &b)
		a.err = b.Error
	}
	return a
}

func record(t *testing.T, store *core.Storage, runID string, want core.RunStatus) core.RunRecord {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		rec, err := store.GetRun(context.Background(), runID)
		if err == nil && rec.Status == want {
			return rec
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s: record %+v (%v), want status %s", runID, rec, err, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Prefer: respond-async and "background": true both answer 202 with the
// run id and its Location at once; the run goes on without a client, the
// passive stream tails it to its end and its record says completed.
func TestBackgroundRunAnswers202AndRunsToTheEnd(t *testing.T) {
	for name, req := range map[string][2]string{
		"prefer header":   {`{"input":"hi"}`, "respond-async, wait=10"},
		"background body": {`{"input":"hi","background":true}`, ""},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, setup{turns: []modeltest.Turn{modeltest.Slow(modeltest.Text("one ", "two ", "three"), 150*time.Millisecond)}})
			var hdr []string
			if req[1] != "" {
				hdr = []string{"Prefer", req[1]}
			}
			a := e.post(t, "/agents/writer/run", req[0], hdr...)
			if a.status != http.StatusAccepted || a.run.RunID == "" || a.run.SessionID == "" || a.location != "/runs/"+a.run.RunID {
				t.Fatalf("answer %d %q Location %q", a.status, a.body, a.location)
			}
			// The answer came before the run's end (it takes 450 ms).
			if rec, err := e.store.GetRun(context.Background(), a.run.RunID); err != nil || rec.Status.Final() {
				t.Errorf("at the 202 the record is %+v (%v): the answer waited for the run", rec, err)
			}
			fs := e.open(t, "GET", a.location+"/stream", "").rest()
			if got := text(fs); got != "one two three" || fs[len(fs)-1].Crumb.CrumbType() != core.TypeAgentRunEnd {
				t.Fatalf("the tail: %q %s", got, types(fs))
			}
			rec := record(t, e.store, a.run.RunID, core.RunCompleted)
			if rec.SessionID != a.run.SessionID {
				t.Fatalf("record %+v", rec)
			}
		})
	}
}

func TestBackgroundRunIsCancellable(t *testing.T) {
	reached := make(chan struct{})
	e := newEnv(t, setup{turns: []modeltest.Turn{modeltest.Block(reached, "half")}})
	a := e.post(t, "/agents/writer/run", `{"input":"hi","background":true}`)
	if a.status != http.StatusAccepted {
		t.Fatalf("%d %s", a.status, a.body)
	}
	<-reached
	tail := e.open(t, "GET", a.location+"/stream", "")
	if !e.inst.Cancel(a.run.RunID) {
		t.Fatal("the background run is not running here")
	}
	fs := tail.rest()
	if code := errorCode(fs[len(fs)-1].Crumb); code != core.CodeRunCancelled {
		t.Fatalf("the tail ended with %s", types(fs))
	}
	if rec := record(t, e.store, a.run.RunID, core.RunCancelled); rec.ErrorCode != core.CodeRunCancelled {
		t.Fatalf("record %+v", rec)
	}
}

// The busy-session policy holds for background runs: a second run on a
// held session is refused SESSION_BUSY whichever way either was started
// (409 in the background, the stream's terminal error when streamed).
func TestBackgroundRunOnBusySessionIs409(t *testing.T) {
	reached := make(chan struct{})
	e := newEnv(t, setup{turns: []modeltest.Turn{modeltest.Block(reached, "working")}})
	a := e.post(t, "/agents/writer/run", `{"input":"hi","background":true,"session":{"id":"s1"}}`)
	if a.status != http.StatusAccepted || a.run.SessionID != "s1" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	<-reached
	b := e.post(t, "/agents/writer/run", `{"input":"again","session":{"id":"s1"}}`, "Prefer", "respond-async")
	if b.status != http.StatusConflict || b.err.Code != core.CodeSessionBusy {
		t.Fatalf("a background run on the busy session: %d %s", b.status, b.body)
	}
	c := e.open(t, "POST", "/agents/writer/run", `{"input":"again","session":{"id":"s1"}}`).rest()
	if len(c) != 1 || errorCode(c[0].Crumb) != core.CodeSessionBusy {
		t.Fatalf("a streamed run on the session a background run holds: %s", types(c))
	}
}

func TestBackgroundRunRefusals(t *testing.T) {
	e := newEnv(t, setup{cfg: engine.Config{Pipelines: map[string][]core.PipelineStep{"one": {{Type: core.StepAgent, AgentID: "writer"}}}}})
	for _, c := range []struct {
		path, body string
		status     int
		code       string
	}{
		{"/agents/ghost/run", `{"background":true}`, 404, core.CodeAgentNotFound},
		{"/pipelines/ghost/run", `{"background":true}`, 404, core.CodePipelineNotFound},
		{"/pipelines/one/run", `{"background":true,"webhook":"https://example.com/hook"}`, 400, core.CodeValidationError},
		// No secret configured: a webhook is refused before the run.
		{"/agents/writer/run", `{"background":true,"webhook":"https://example.com/hook"}`, 400, core.CodeValidationError},
	} {
		if a := e.post(t, c.path, c.body); a.status != c.status || a.err.Code != c.code {
			t.Errorf("%s %s = %d %s, want %d %s", c.path, c.body, a.status, a.body, c.status, c.code)
		}
	}
	// With Prefer: respond-async the client expects no stream: a bad body
	// is a plain 400.
	for _, c := range []struct {
		path, body string
		status     int
		code       string
	}{
		{"/agents/writer/run", `{"input":`, 400, core.CodeBadRequest},
		{"/pipelines/one/run", `[]`, 400, core.CodeBadRequest},
	} {
		if a := e.post(t, c.path, c.body, "Prefer", "respond-async"); a.status != c.status || a.err.Code != c.code {
			t.Errorf("%s %s = %d %s, want %d %s", c.path, c.body, a.status, a.body, c.status, c.code)
		}
	}
}

// A background pipeline answers 202 with its run's Location; its stream
// follows the pipeline step by step to agent:run:end with the last step's
// output, and its record completes.
func TestBackgroundPipelineAnswers202AndIsTailed(t *testing.T) {
	e := newEnv(t, setup{
		turns: []modeltest.Turn{modeltest.Slow(modeltest.Text("drafted"), 100*time.Millisecond), modeltest.Text("polished")},
		cfg:   engine.Config{Pipelines: map[string][]core.PipelineStep{"two": {{AgentID: "writer"}, {AgentID: "writer"}}}},
	})
	a := e.post(t, "/pipelines/two/run", `{"input":"plan"}`, "Prefer", "respond-async")
	if a.status != http.StatusAccepted || a.run.RunID == "" || a.location != "/runs/"+a.run.RunID {
		t.Fatalf("answer %d %q Location %q", a.status, a.body, a.location)
	}
	fs := e.open(t, "GET", a.location+"/stream", "").rest()
	got := types(fs)
	want := strings.Join([]string{core.TypeAgentRunStart, core.TypePipelineStepStart, core.TypePipelineStepEnd, core.TypePipelineStepStart, core.TypePipelineStepEnd, core.TypeAgentRunEnd}, ",")
	if got != want {
		t.Fatalf("the pipeline's stream: %s, want %s", got, want)
	}
	if out, _ := json.Marshal(fs[len(fs)-1].Crumb.(*core.AgentRunEnd).Output); string(out) != `"polished"` {
		t.Fatalf("output %s", out)
	}
	if rec := record(t, e.store, a.run.RunID, core.RunCompleted); rec.PipelineID != "two" {
		t.Fatalf("record %+v", rec)
	}
}

// Stop cancels a background run and waits for its durable end; no
// goroutine outlives it.
func TestStopDrainsBackgroundRuns(t *testing.T) {
	http.DefaultClient.CloseIdleConnections()
	before := runtime.NumGoroutine()
	t.Run("run", func(t *testing.T) {
		reached := make(chan struct{})
		e := newEnv(t, setup{turns: []modeltest.Turn{modeltest.Block(reached, "half")}})
		a := e.post(t, "/agents/writer/run", `{"input":"hi","background":true}`)
		<-reached
		var mu sync.Mutex
		var ended core.Crumb
		e.inst.On(func(_ context.Context, c core.Crumb) {
			if c.Base().RunID == a.run.RunID && (c.CrumbType() == core.TypeAgentError || c.CrumbType() == core.TypeAgentRunEnd) {
				mu.Lock()
				ended = c
				mu.Unlock()
			}
		})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := e.inst.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if code := errorCode(ended); code != core.CodeRunCancelled {
			t.Fatalf("when Stop returned the background run had ended with %v", ended)
		}
		if b := e.post(t, "/agents/writer/run", `{"input":"hi","background":true}`); b.status != 503 || b.err.Code != core.CodeInstanceStopping {
			t.Fatalf("a background run after Stop: %d %s", b.status, b.body)
		}
	})
	http.DefaultClient.CloseIdleConnections()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A webhook receives the run's record, signed; a 500 is retried.
func TestBackgroundRunWebhookIsSignedAndRetried(t *testing.T) {
	const secret = "s3cret"
	type delivery struct {
		sig  string
		body []byte
	}
	var mu sync.Mutex
	var got []delivery
	done := make(chan struct{})
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, delivery{r.Header.Get(engine.SignatureHeader), body})
		if len(got) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		close(done)
	}))
	defer recv.Close()
	e := newEnv(t, setup{cfg: engine.Config{Webhooks: engine.WebhookOptions{Secret: secret, AllowPrivateNetworks: true, Backoff: 10 * time.Millisecond}}})
	a := e.post(t, "/agents/writer/run", `{"input":"hi","background":true,"webhook":"`+recv.URL+`/hook"}`)
	if a.status != http.StatusAccepted {
		t.Fatalf("%d %s", a.status, a.body)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("no retried delivery")
	}
	mu.Lock()
	defer mu.Unlock()
	for i, d := range got {
		ts, _, _ := strings.Cut(strings.TrimPrefix(d.sig, "t="), ",")
		var unix int64
		if err := json.Unmarshal([]byte(ts), &unix); err != nil {
			t.Fatalf("delivery %d: signature %q", i, d.sig)
		}
		if want := engine.SignWebhook(secret, time.Unix(unix, 0), d.body); !hmac.Equal([]byte(d.sig), []byte(want)) {
			t.Fatalf("delivery %d: signature %q, want %q", i, d.sig, want)
		}
		var rec core.RunRecord
		if err := json.Unmarshal(d.body, &rec); err != nil || rec.ID != a.run.RunID || rec.Status != core.RunCompleted {
			t.Fatalf("delivery %d: %s", i, d.body)
		}
	}
	if len(got) != 2 {
		t.Fatalf("%d deliveries, want 2 (a 500, then the retry)", len(got))
	}
}

// Without AllowPrivateNetworks a loopback webhook is refused at request
// time, before anything runs.
func TestBackgroundRunWebhookRefusesLoopback(t *testing.T) {
	e := newEnv(t, setup{cfg: engine.Config{Webhooks: engine.WebhookOptions{Secret: "x"}}})
	for _, u := range []string{"http://127.0.0.1:9/hook", "http://localhost/hook", "http://[::1]/hook", "http://169.254.169.254/", "http://10.0.0.1/", "ftp://example.com/"} {
		if a := e.post(t, "/agents/writer/run", `{"input":"hi","background":true,"webhook":"`+u+`"}`); a.status != 400 || a.err.Code != core.CodeValidationError {
			t.Errorf("webhook %s: %d %s", u, a.status, a.body)
		}
	}
}

// The webhook fires on every way a background run stops: completed,
// failed, cancelled, suspended for a human.
func TestBackgroundRunWebhookOnEveryEnding(t *testing.T) {
	for _, c := range []struct {
		name  string
		agent string
		turn  func(reached chan struct{}) modeltest.Turn
		want  core.RunStatus
	}{
		{"completed", "writer", func(chan struct{}) modeltest.Turn { return modeltest.Text("done") }, core.RunCompleted},
		{"failed", "writer", func(chan struct{}) modeltest.Turn { return modeltest.Fail(errNope) }, core.RunFailed},
		{"cancelled", "writer", func(r chan struct{}) modeltest.Turn { return modeltest.Block(r, "half") }, core.RunCancelled},
		{"suspended", "asker", func(chan struct{}) modeltest.Turn {
			return modeltest.ToolCall("human_confirm", map[string]bool{"ok": true})
		}, core.RunSuspended},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := make(chan core.RunRecord, 4)
			recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var rec core.RunRecord
				_ = json.NewDecoder(r.Body).Decode(&rec)
				got <- rec
			}))
			defer recv.Close()
			reached := make(chan struct{})
			asker := &core.Agent{ID: "asker", Model: core.ModelRef{Provider: "scripted", Model: "m"}, HumanTools: []core.HumanToolDef{{Name: "confirm"}}}
			e := newEnv(t, setup{turns: []modeltest.Turn{c.turn(reached)}, cfg: engine.Config{Agents: []*core.Agent{asker},
				Webhooks: engine.WebhookOptions{Secret: "x", AllowPrivateNetworks: true}}})
			a := e.post(t, "/agents/"+c.agent+"/run", `{"input":"hi","background":true,"webhook":"`+recv.URL+`"}`)
			if a.status != http.StatusAccepted {
				t.Fatalf("%d %s", a.status, a.body)
			}
			if c.want == core.RunCancelled {
				<-reached
				e.inst.Cancel(a.run.RunID)
			}
			select {
			case rec := <-got:
				if rec.ID != a.run.RunID || rec.Status != c.want {
					t.Fatalf("delivered %+v, want %s", rec, c.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no delivery")
			}
		})
	}
}

// Under the enqueue policy a background run for a busy session answers 202
// at once with the id it will run under; cancelled while it waits, it never
// starts; the next one queued starts when the session is free.
func TestQueuedBackgroundRun(t *testing.T) {
	reached := make(chan struct{})
	e := newEnv(t, setup{turns: []modeltest.Turn{modeltest.Block(reached, "working"), modeltest.Text("after")},
		cfg: engine.Config{SessionConcurrency: core.ConcurrencyEnqueue}})
	first := e.post(t, "/agents/writer/run", `{"input":"one","background":true,"session":{"id":"s1"}}`)
	if first.status != http.StatusAccepted {
		t.Fatalf("%d %s", first.status, first.body)
	}
	<-reached
	queued := e.post(t, "/agents/writer/run", `{"input":"two","background":true,"session":{"id":"s1"}}`)
	if queued.status != http.StatusAccepted || queued.run.SessionID != "s1" || queued.location != "/runs/"+queued.run.RunID {
		t.Fatalf("a queued run: %d %s", queued.status, queued.body)
	}
	next := e.post(t, "/agents/writer/run", `{"input":"three","background":true,"session":{"id":"s1"}}`)
	if next.status != http.StatusAccepted {
		t.Fatalf("a second queued run: %d %s", next.status, next.body)
	}
	// A queued run has no record, so no stream, until it starts.
	if res := e.open(t, "GET", queued.location+"/stream", "").res; res.StatusCode != http.StatusNotFound {
		t.Fatalf("the stream of a queued run: %d", res.StatusCode)
	}
	if !e.inst.Cancel(queued.run.RunID) {
		t.Fatal("Cancel does not reach a queued run")
	}
	record(t, e.store, queued.run.RunID, core.RunCancelled)
	fs := e.open(t, "GET", queued.location+"/stream", "").rest()
	if types(fs) != core.TypeAgentError || errorCode(fs[0].Crumb) != core.CodeRunCancelled {
		t.Fatalf("the cancelled queued run's tail: %s", types(fs))
	}
	if rec := record(t, e.store, queued.run.RunID, core.RunCancelled); rec.SessionID != "s1" || rec.AgentID != "writer" {
		t.Fatalf("record %+v", rec)
	}
	// The holder still runs; once it is cancelled, the next queued run
	// takes the session and completes.
	if _, err := e.store.GetRun(context.Background(), next.run.RunID); err == nil {
		t.Fatal("the run queued behind has a record before it started")
	}
	e.inst.Cancel(first.run.RunID)
	record(t, e.store, first.run.RunID, core.RunCancelled)
	record(t, e.store, next.run.RunID, core.RunCompleted)
	if got := text(e.open(t, "GET", next.location+"/stream", "").rest()); got != "after" {
		t.Fatalf("the next run said %q", got)
	}
}

// Stop ends a run waiting for its session as well as the one holding it.
func TestStopEndsQueuedBackgroundRuns(t *testing.T) {
	reached := make(chan struct{})
	e := newEnv(t, setup{turns: []modeltest.Turn{modeltest.Block(reached, "working"), modeltest.Text("after")},
		cfg: engine.Config{SessionConcurrency: core.ConcurrencyEnqueue}})
	e.post(t, "/agents/writer/run", `{"input":"one","background":true,"session":{"id":"s1"}}`)
	<-reached
	queued := e.post(t, "/agents/writer/run", `{"input":"two","background":true,"session":{"id":"s1"}}`)
	var mu sync.Mutex
	var ended core.Crumb
	e.inst.On(func(_ context.Context, c core.Crumb) {
		if c.Base().RunID == queued.run.RunID {
			mu.Lock()
			ended = c
			mu.Unlock()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.inst.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if ended == nil || ended.CrumbType() != core.TypeAgentError {
		t.Fatalf("the queued run ended with %v", ended)
	}
}

// A webhook waiting to retry does not hold Stop up: Stop abandons the
// retry, and no goroutine outlives it.
func TestStopAbandonsWebhookRetries(t *testing.T) {
	http.DefaultClient.CloseIdleConnections()
	before := runtime.NumGoroutine()
	t.Run("run", func(t *testing.T) {
		hit := make(chan struct{}, 10)
		recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hit <- struct{}{}
			w.WriteHeader(http.StatusServiceUnavailable)
		}))
		defer recv.Close()
		e := newEnv(t, setup{cfg: engine.Config{Webhooks: engine.WebhookOptions{Secret: "x", AllowPrivateNetworks: true, Backoff: time.Minute}}})
		if a := e.post(t, "/agents/writer/run", `{"input":"hi","background":true,"webhook":"`+recv.URL+`"}`); a.status != http.StatusAccepted {
			t.Fatalf("%d %s", a.status, a.body)
		}
		<-hit
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.inst.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("Stop took %v with a webhook retry pending", d)
		}
		recv.CloseClientConnections()
	})
	http.DefaultClient.CloseIdleConnections()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
