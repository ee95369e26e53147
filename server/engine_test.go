package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/server"
)

// The cancel route asks the job queue first, then the canceller, then the
// runs waiting for a human; the first that finds the run answers.
func TestCancelRouteAsksQueueThenCancellerThenSuspended(t *testing.T) {
	var asked []string
	f := newFixture(t, fakeConfig{
		CancelQueued: func(_ context.Context, runID string) (bool, error) {
			asked = append(asked, "queue "+runID)
			return runID == "queued", nil
		},
		CancelSuspended: func(_ context.Context, runID string) (bool, error) {
			asked = append(asked, "suspended "+runID)
			switch runID {
			case "claimed":
				return true, &core.BreadError{Code: core.CodeCheckpointClaimed, Message: "a resume is in flight"}
			case "composed":
				return true, &core.BreadError{Code: core.CodeNotImplemented, Message: "it waits inside a pipeline"}
			case "broken":
				return false, errors.New("dial tcp: password=hunter2")
			}
			return runID == "waiting", nil
		},
	})
	canceller := cancelFunc(func(_ context.Context, runID string) (bool, error) {
		asked = append(asked, "cancel "+runID)
		return runID == "running", nil
	})
	ts := f.serve(t, server.Options{Canceller: canceller})
	cases := []struct {
		runID  string
		status int
		code   string
		asked  string
	}{
		{"queued", 200, "", "queue queued"},
		{"running", 200, "", "queue running, cancel running"},
		{"waiting", 200, "", "queue waiting, cancel waiting, suspended waiting"},
		{"claimed", 409, core.CodeCheckpointClaimed, "queue claimed, cancel claimed, suspended claimed"},
		{"composed", 501, core.CodeNotImplemented, "queue composed, cancel composed, suspended composed"},
		{"broken", 500, core.CodeInternalError, "queue broken, cancel broken, suspended broken"},
		{"ghost", 404, core.CodeNotFound, "queue ghost, cancel ghost, suspended ghost"},
	}
	for _, c := range cases {
		asked = nil
		r := do(t, ts.URL, "POST", "/runs/"+c.runID+"/cancel", "")
		if r.status != c.status || (c.code != "" && r.errorCode(t) != c.code) || strings.Contains(string(r.body), "hunter2") {
			t.Errorf("cancel %s = %d %s, want %d %s", c.runID, r.status, r.body, c.status, c.code)
		}
		if got := strings.Join(asked, ", "); got != c.asked {
			t.Errorf("cancel %s asked %s, want %s", c.runID, got, c.asked)
		}
	}
}

// cancelFunc is a server.Canceller.
type cancelFunc func(ctx context.Context, runID string) (bool, error)

func (c cancelFunc) Cancel(ctx context.Context, runID string) (bool, error) { return c(ctx, runID) }

// Without Options.Canceller the route cancels the engine's own run.
func TestCancelRouteCancelsTheEnginesRun(t *testing.T) {
	reached := make(chan struct{})
	f := newFixture(t, fakeConfig{Block: reached})
	ts := f.serve(t, server.Options{})
	ended := make(chan error, 1)
	runID := make(chan string, 1)
	go func() {
		var last error
		for c, err := range f.inst.Run(context.Background(), "writer", "go", core.RunOptions{}) {
			if s, ok := c.(*core.AgentRunStart); ok {
				runID <- s.RunID
			}
			last = err
		}
		ended <- last
	}()
	id := <-runID
	<-reached
	if r := do(t, ts.URL, "POST", "/runs/"+id+"/cancel", ""); r.status != 200 {
		t.Fatalf("cancel = %d %s", r.status, r.body)
	}
	if err := <-ended; !errors.Is(err, core.ErrRunCancelled) {
		t.Fatalf("the run ended with %v", err)
	}
}

// GET /schedules lists the engine's schedules; none is [].
func TestSchedulesRoute(t *testing.T) {
	next := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	f := newFixture(t, fakeConfig{Schedules: []core.ScheduleInfo{{Name: "hourly", Spec: "@every 1h", AgentID: "writer", Next: next}}})
	var list []core.ScheduleInfo
	r := do(t, f.serve(t, server.Options{}).URL, "GET", "/schedules", "")
	r.decode(t, &list)
	if r.status != 200 || len(list) != 1 || list[0].Name != "hourly" || !list[0].Next.Equal(next) {
		t.Fatalf("GET /schedules = %d %s", r.status, r.body)
	}
	empty := newFixture(t, fakeConfig{})
	if r := do(t, empty.serve(t, server.Options{}).URL, "GET", "/schedules", ""); r.status != 200 || string(r.body) != "[]\n" {
		t.Fatalf("no schedules = %d %q", r.status, r.body)
	}
}

// An Engine that runs nothing in the background says so with
// NOT_IMPLEMENTED, and a client asking for a background run gets 501, for
// an agent and for a pipeline.
func TestBackgroundRunsNotImplementedIs501(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	ts := f.serve(t, server.Options{})
	for _, p := range []string{"/agents/writer/run", "/pipelines/p/run"} {
		r := do(t, ts.URL, "POST", p, `{"input":"hi"}`, "Prefer", "respond-async")
		if r.status != 501 || r.errorCode(t) != core.CodeNotImplemented {
			t.Errorf("POST %s in the background = %d %s", p, r.status, r.body)
		}
	}
}
