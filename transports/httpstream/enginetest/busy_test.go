package enginetest_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// slowScopeEnd is a plugin whose scope observation takes a while to end,
// as an exporter's might: the engine ends a run's scope after the run's
// last crumb and before it releases the run's session.
type slowScopeEnd struct{}

func (slowScopeEnd) Name() string { return "slow_scope_end" }
func (slowScopeEnd) ObserveScope(ctx context.Context, _ core.Crumb) (context.Context, func()) {
	return ctx, func() { time.Sleep(20 * time.Millisecond) }
}

// A client that reads the end of its run and at once starts the next on
// the same session finds the session free: the ending frame reaches it only
// after the engine released the session (the default busy policy would
// otherwise answer 409 SESSION_BUSY).
func TestTheNextRunOnASessionStartsAsSoonAsTheLastEnds(t *testing.T) {
	turns := make([]modeltest.Turn, 5)
	for i := range turns {
		turns[i] = modeltest.Text("answer ")
	}
	e := newEnv(t, setup{turns: turns, cfg: engine.Config{Plugins: []core.BreadPlugin{slowScopeEnd{}}}})
	for i := range turns {
		s := e.open(t, "POST", "/agents/writer/run", `{"input":"hi","session":{"id":"s1"}}`, "Accept", "application/x-ndjson")
		if s.res.StatusCode != http.StatusOK {
			t.Fatalf("run %d on session s1: status %d", i, s.res.StatusCode)
		}
		for {
			f, ok := s.next()
			if !ok {
				t.Fatalf("run %d ended without agent:run:end", i)
			}
			if f.Crumb.CrumbType() == core.TypeAgentRunEnd {
				break
			}
		}
	}
}
