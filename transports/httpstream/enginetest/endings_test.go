package enginetest_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/transports/httpstream"
)

// A passive stream always ends: an unknown run is refused before anything
// streams, and a finished run ends after its replay from any position,
// including one at or past its final seq (an EventSource reconnecting after
// the last crumb).
func TestPassiveStreamsOfUnknownAndFinishedRunsEnd(t *testing.T) {
	e := newEnv(t, setup{})
	id, run := e.start(t, `{"input":"hi"}`)
	run.rest()

	s := e.open(t, "GET", "/runs/no-such-run/stream", "")
	if s.res.StatusCode != 404 {
		t.Fatalf("an unknown run = %d", s.res.StatusCode)
	}
	if body, _ := io.ReadAll(s.res.Body); !strings.Contains(string(body), core.CodeRunNotFound) {
		t.Fatalf("an unknown run's body: %s", body)
	}
	for _, pos := range []string{"3", "4", "99"} {
		for _, accept := range []string{"application/x-ndjson", "text/event-stream"} {
			done := make(chan []core.Frame, 1)
			go func() {
				done <- e.open(t, "GET", "/runs/"+id+"/stream", "", "Last-Event-ID", pos, "Accept", accept).rest()
			}()
			select {
			case fs := <-done:
				if len(fs) != 0 {
					t.Errorf("after %s (%s): %d frames, want none", pos, accept, len(fs))
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("a finished run's stream from seq %s (%s) did not end", pos, accept)
			}
		}
	}
}

// TestPassiveStreamOfALostRunEnds: a tail of a run whose instance died
// ends once the store's record says lost (no Redis coordinator involved),
// with the durable RUN_LOST the sweeping instance logged.
func TestPassiveStreamOfALostRunEnds(t *testing.T) {
	store := memory.New()
	reached := make(chan struct{})
	e := newEnv(t, setup{cfg: engine.Config{Store: store}, turns: []modeltest.Turn{modeltest.Block(reached, "partial ")}})
	id, run := e.start(t, `{"input":"hi"}`)
	<-reached
	watch := e.open(t, "GET", "/runs/"+id+"/stream", "")
	if f, ok := watch.next(); !ok || f.Crumb.CrumbType() != core.TypeAgentRunStart {
		t.Fatal("the tail catches up first")
	}
	// Stand in for the sweeper of another instance: the record turns lost
	// and the end is logged after the run's last entry.
	ctx := context.Background()
	rec, err := store.GetRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	max, _ := store.MaxCrumbSeq(ctx, id)
	rec.Status, rec.ErrorCode = core.RunLost, core.CodeRunLost
	if err := store.PutRun(ctx, rec); err != nil {
		t.Fatal(err)
	}
	lost := &core.AgentError{CrumbBase: core.CrumbBase{AgentID: "writer", RunID: id, SessionID: rec.SessionID, Seq: max + 1}, Error: &core.BreadError{Code: core.CodeRunLost, Message: "lost"}}
	if err := store.AppendCrumbs(ctx, []core.CrumbLogEntry{{RunID: id, Seq: max + 1, SessionID: rec.SessionID, AgentID: "writer", Type: core.TypeAgentError, Crumb: lost}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan []core.Frame, 1)
	go func() { done <- watch.rest() }()
	select {
	case fs := <-done:
		if len(fs) == 0 {
			t.Fatal("the tail ended without its end")
		}
		end, ok := fs[len(fs)-1].Crumb.(*core.AgentError)
		if !ok || end.Error.Code != core.CodeRunLost {
			t.Fatalf("the tail ends with %+v", fs[len(fs)-1].Crumb)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the tail of a lost run did not end")
	}
	run.close()
}

// TestNoSilenceLongerThanTheHeartbeat: from the moment a passive stream
// opens (its catch-up written at once), no gap between writes exceeds the
// heartbeat interval.
func TestNoSilenceLongerThanTheHeartbeat(t *testing.T) {
	const every = 300 * time.Millisecond
	reached := make(chan struct{})
	e := newEnv(t, setup{opts: httpstream.Options{Heartbeat: every}, turns: []modeltest.Turn{modeltest.Block(reached)}})
	id, run := e.start(t, `{"input":"hi"}`)
	defer run.close()
	<-reached
	s := e.open(t, "GET", "/runs/"+id+"/stream", "")
	last := time.Now()
	if f, ok := s.next(); !ok || f.Crumb.CrumbType() != core.TypeAgentRunStart {
		t.Fatal("no replay")
	}
	for beats := 0; beats < 4; {
		if !s.sc.Scan() {
			t.Fatal("stream ended while the run was idle")
		}
		now := time.Now()
		// Generous for a busy machine, but below the old first gap of
		// two intervals.
		if gap := now.Sub(last); gap > every+every/2 {
			t.Fatalf("a silence of %v with heartbeats every %v", gap, every)
		}
		last = now
		if len(s.sc.Bytes()) == 0 {
			beats++
		}
	}
}
