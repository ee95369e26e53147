package enginetest_test

import (
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
)

// TestNoGoroutineOutlivesItsStream runs every kind of stream ending (a run
// to its end, a passive replay, a live tail, a client leaving mid-run, a
// client leaving a passive stream) and checks that the goroutine count
// comes back once the servers are closed.
func TestNoGoroutineOutlivesItsStream(t *testing.T) {
	http.DefaultClient.CloseIdleConnections()
	before := runtime.NumGoroutine()
	t.Run("streams", func(t *testing.T) {
		turn, _ := slowText(30)
		reached := make(chan struct{})
		e := newEnv(t, setup{turns: []modeltest.Turn{turn, modeltest.Block(reached, "x")}})
		id, s := e.start(t, `{"input":"hi"}`)
		live := e.open(t, "GET", "/runs/"+id+"/stream", "")
		live.rest()
		s.rest()
		e.open(t, "GET", "/runs/"+id+"/stream", "").rest()

		id2, s2 := e.start(t, `{"input":"again"}`)
		<-reached
		watch := e.open(t, "GET", "/runs/"+id2+"/stream", "")
		if f, ok := watch.next(); !ok || f.Crumb.CrumbType() != core.TypeAgentRunStart {
			t.Fatal("no replay")
		}
		watch.close()
		s2.close()
		waitLogged(t, e.store, id2, func(le core.CrumbLogEntry) bool { return le.Type == core.TypeAgentError })
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
