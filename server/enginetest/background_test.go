package enginetest_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/server"
)

// waitRun reads GET /runs/{runId} (location) and checks the run's status
// is want. A run that is to end (want completed, failed or cancelled) is
// first followed on its passive stream, which ends with it; a run's
// queued or running state is already recorded when the request that
// started it answers, or when its model is called.
func waitRun(t *testing.T, base, location, want string, hdr ...string) runState {
	t.Helper()
	switch want {
	case "completed", "failed", "cancelled":
		if r := do(t, base, "GET", location+"/stream", "", hdr...); r.status != 200 {
			t.Fatalf("GET %s/stream = %d %s", location, r.status, r.body)
		}
	}
	var got runState
	r := do(t, base, "GET", location, "", hdr...)
	if r.status == 200 {
		r.decode(t, &got)
	}
	if got.Status != want {
		t.Fatalf("GET %s = %d %s, want status %s", location, r.status, r.body, want)
	}
	return got
}

// Through the whole server: a background run answers 202 with its
// Location, GET /runs/{runId} follows it to completed, and it records the
// caller that started it although the request ended long before the run.
func TestBackgroundRunThroughTheServer(t *testing.T) {
	f := newFixture(t, engine.Config{}, modeltest.Slow(modeltest.Text("a ", "b"), 50*time.Millisecond))
	ts := f.serve(t, server.Options{Auth: &server.Auth{Strategies: []core.BreadAuthStrategy{headerAuth{}},
		Authorize: func(_ context.Context, id *core.AuthIdentity, _ string, _ map[string]string) bool { return id != nil }}})
	r := do(t, ts.URL, "POST", "/agents/writer/run", `{"input":"hi"}`, "Prefer", "respond-async", "X-Identity", "ana")
	var run core.Detached
	if r.status != 202 || r.header.Get("Location") == "" {
		t.Fatalf("POST = %d %s", r.status, r.body)
	}
	r.decode(t, &run)
	if r.header.Get("Location") != "/runs/"+run.RunID {
		t.Fatalf("Location %q for %s", r.header.Get("Location"), r.body)
	}
	waitRun(t, ts.URL, r.header.Get("Location"), "completed", "X-Identity", "ana")
	rec, err := f.store.GetRun(context.Background(), run.RunID)
	if err != nil || rec.StartedBy == "" {
		t.Fatalf("record %+v (%v): the background run lost its starter", rec, err)
	}
}

func TestBackgroundRunCancelRoute(t *testing.T) {
	reached := make(chan struct{})
	f := newFixture(t, engine.Config{}, modeltest.Block(reached, "half"))
	ts := f.serve(t, server.Options{})
	r := do(t, ts.URL, "POST", "/agents/writer/run", `{"input":"hi","background":true}`)
	var run core.Detached
	if r.status != 202 {
		t.Fatalf("POST = %d %s", r.status, r.body)
	}
	if err := json.Unmarshal(r.body, &run); err != nil {
		t.Fatal(err)
	}
	<-reached
	waitRun(t, ts.URL, "/runs/"+run.RunID, "running")
	if c := do(t, ts.URL, "POST", "/runs/"+run.RunID+"/cancel", ""); c.status != 200 {
		t.Fatalf("cancel = %d %s", c.status, c.body)
	}
	if got := waitRun(t, ts.URL, "/runs/"+run.RunID, "cancelled"); got.ErrorCode != core.CodeRunCancelled {
		t.Fatalf("the cancelled run: %+v", got)
	}
}

// With a job queue, a background run waits as queued while the only worker
// is busy; POST /runs/{id}/cancel ends it there (it never starts), and GET
// /schedules lists bread's schedules with their next tick.
func TestQueuedRunCancelRouteAndSchedules(t *testing.T) {
	reached := make(chan struct{})
	f := newFixture(t, engine.Config{
		Jobs:      memory.NewQueue(memory.QueueOptions{Concurrency: 1}),
		Schedules: []engine.Schedule{{Name: "hourly", Spec: "@every 1h", AgentID: "writer", Input: "report"}},
	}, modeltest.Block(reached, "half"), modeltest.Text("second"))
	ts := f.serve(t, server.Options{})
	first := do(t, ts.URL, "POST", "/agents/writer/run", `{"input":"one","background":true}`)
	if first.status != 202 {
		t.Fatalf("POST = %d %s", first.status, first.body)
	}
	<-reached
	r := do(t, ts.URL, "POST", "/agents/writer/run", `{"input":"two"}`, "Prefer", "respond-async")
	var queued core.Detached
	if r.status != 202 {
		t.Fatalf("POST = %d %s", r.status, r.body)
	}
	r.decode(t, &queued)
	waitRun(t, ts.URL, "/runs/"+queued.RunID, "queued")
	if c := do(t, ts.URL, "POST", "/runs/"+queued.RunID+"/cancel", ""); c.status != 200 {
		t.Fatalf("cancel = %d %s", c.status, c.body)
	}
	if got := waitRun(t, ts.URL, "/runs/"+queued.RunID, "cancelled"); got.ErrorCode != core.CodeRunCancelled {
		t.Fatalf("the cancelled queued run: %+v", got)
	}
	if c := do(t, ts.URL, "POST", "/runs/"+queued.RunID+"/cancel", ""); c.status != 404 {
		t.Fatalf("second cancel = %d %s, want 404", c.status, c.body)
	}
	var list []core.ScheduleInfo
	s := do(t, ts.URL, "GET", "/schedules", "")
	if s.status != 200 {
		t.Fatalf("GET /schedules = %d %s", s.status, s.body)
	}
	s.decode(t, &list)
	if len(list) != 1 || list[0].Name != "hourly" || list[0].AgentID != "writer" || !list[0].Next.After(time.Now()) {
		t.Fatalf("GET /schedules = %s", s.body)
	}
}
