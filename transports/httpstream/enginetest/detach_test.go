package enginetest_test

import (
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
)

// A detached run goes on when its client leaves (a browser reloading its
// page follows it on the passive stream), and the cancel route still ends
// it.
func TestDetachedRunOutlivesItsClient(t *testing.T) {
	e := newEnv(t, setup{turns: []modeltest.Turn{modeltest.Slow(modeltest.Text("one ", "two ", "three ", "four"), 50*time.Millisecond)}})
	id, s := e.start(t, `{"input":"hi","detach":true}`)
	s.close()
	le := waitLogged(t, e.store, id, func(le core.CrumbLogEntry) bool {
		return le.Type == core.TypeAgentRunEnd || le.Type == core.TypeAgentError
	})
	if le.Type != core.TypeAgentRunEnd {
		t.Fatalf("the detached run ended with %s (%s)", le.Type, errorCode(le.Crumb))
	}
	if got := text(e.open(t, "GET", "/runs/"+id+"/stream", "").rest()); got != "one two three four" {
		t.Fatalf("the passive stream replays %q", got)
	}
}

func TestDetachedRunIsStillCancellable(t *testing.T) {
	reached := make(chan struct{})
	e := newEnv(t, setup{turns: []modeltest.Turn{modeltest.Block(reached, "half")}})
	id, s := e.start(t, `{"input":"hi","detach":true}`)
	<-reached
	s.close()
	time.Sleep(200 * time.Millisecond)
	if !e.inst.Cancel(id) {
		t.Fatal("the detached run stopped when its client left")
	}
	le := waitLogged(t, e.store, id, func(le core.CrumbLogEntry) bool { return le.Type == core.TypeAgentError })
	if code := errorCode(le.Crumb); code != core.CodeRunCancelled {
		t.Fatalf("run ended with %s, want RUN_CANCELLED", code)
	}
}
