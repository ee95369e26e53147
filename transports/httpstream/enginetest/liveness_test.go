package enginetest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/transports/httpstream"
)

// liveness is a settable Liveness.
type liveness struct{ alive atomic.Bool }

func (l *liveness) Alive(context.Context, string) (bool, error) { return l.alive.Load(), nil }

func TestPassiveStreamEndsWithRunLostWhenNoReplicaHoldsTheRun(t *testing.T) {
	lv := &liveness{}
	lv.alive.Store(true)
	reached := make(chan struct{})
	logs := &lockedBuffer{}
	e := newEnv(t, setup{
		opts: httpstream.Options{Liveness: lv, LivenessInterval: 10 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(logs, nil))},
		turns: []modeltest.Turn{modeltest.Block(reached, "partial ")},
	})
	id, run := e.start(t, `{"input":"hi"}`)
	<-reached
	watch := e.open(t, "GET", "/runs/"+id+"/stream", "")
	f, ok := watch.next()
	if !ok || f.Crumb.CrumbType() != core.TypeAgentRunStart {
		t.Fatalf("the tail catches up first")
	}
	sessionID := f.Crumb.Base().SessionID
	// The replica holding the run "dies": its lease is gone.
	lv.alive.Store(false)
	rest := watch.rest()
	last := rest[len(rest)-1].Crumb.(*core.AgentError)
	if last.Error.Code != core.CodeRunLost || last.AgentID != "writer" {
		t.Fatalf("tail ends with %+v", last)
	}
	// The tail's line names the run as the engine's lines do.
	want := "run_id=" + id + " session_id=" + sessionID + " agent_id=writer"
	if sessionID == "" || !strings.Contains(logs.String(), `msg="bread: run lost: no replica holds it any more" `+want) {
		t.Fatalf("no run-lost line with %q:\n%s", want, logs.String())
	}
	run.close()
}

// lockedBuffer is a log sink safe for the handler's goroutine and the
// test's.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestSuspendedRunIsNotLost(t *testing.T) {
	lv := &liveness{} // nobody holds a suspended run
	agent := &core.Agent{ID: "asker", Model: core.ModelRef{Provider: "scripted", Model: "m"},
		HumanTools: []core.HumanToolDef{core.HumanTool("confirm", json.RawMessage(`{"type":"object"}`))}}
	e := newEnv(t, setup{
		opts:  httpstream.Options{Liveness: lv, LivenessInterval: 5 * time.Millisecond, Heartbeat: 20 * time.Millisecond},
		cfg:   engine.Config{Agents: []*core.Agent{agent}},
		turns: []modeltest.Turn{modeltest.ToolCall("human_confirm", map[string]any{}), modeltest.Text("confirmed")},
	})
	run := e.open(t, "POST", "/agents/asker/run", `{"input":"go"}`).rest()
	hr := run[len(run)-1].Crumb.(*core.HumanRequired)
	watch := e.open(t, "GET", "/runs/"+hr.RunID+"/stream", "")
	for {
		f, ok := watch.next()
		if !ok {
			t.Fatal("closed early")
		}
		if f.Crumb.CrumbType() == core.TypeHumanRequired {
			break
		}
	}
	for watch.beat < 3 { // many liveness checks pass while it waits
		if !watch.sc.Scan() {
			t.Fatal("a suspended run's tail must stay open")
		}
		if len(watch.sc.Bytes()) == 0 {
			watch.beat++
		} else {
			t.Fatalf("unexpected frame while suspended: %s", watch.sc.Bytes())
		}
	}
	lv.alive.Store(true) // the resume holds a lease while it runs
	resumed := e.open(t, "POST", "/resume/"+hr.CheckpointID, `{"response":{"ok":true}}`).rest()
	if resumed[len(resumed)-1].Crumb.CrumbType() != core.TypeAgentRunEnd {
		t.Fatal("resume failed")
	}
	if rest := watch.rest(); rest[len(rest)-1].Crumb.CrumbType() != core.TypeAgentRunEnd {
		t.Fatalf("the tail follows the resumed run to its end")
	}
}
