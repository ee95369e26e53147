package httpstream_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
)

// A run refused because its session is busy (the default reject policy)
// is 409 SESSION_BUSY before any stream opens, in both formats; the run
// holding the session is untouched.
func TestBusySessionIs409(t *testing.T) {
	reached := make(chan struct{})
	e := newEnv(t, setup{turns: []modeltest.Turn{modeltest.Block(reached, "working ")}})
	body := `{"input":"hi","session":{"id":"s1"}}`
	req, _ := http.NewRequestWithContext(t.Context(), "POST", e.ts.URL+"/agents/writer/run", strings.NewReader(body))
	req.Header.Set("Accept", "application/x-ndjson")
	first, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Body.Close()
	<-reached
	for _, accept := range []string{"application/x-ndjson", "text/event-stream"} {
		req, _ := http.NewRequest("POST", e.ts.URL+"/agents/writer/run", strings.NewReader(body))
		req.Header.Set("Accept", accept)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var b struct{ Error core.ClientError }
		_ = json.Unmarshal(raw, &b)
		if res.StatusCode != http.StatusConflict || b.Error.Code != core.CodeSessionBusy {
			t.Errorf("second run on session s1 (%s) = %d %s, want 409 SESSION_BUSY", accept, res.StatusCode, raw)
		}
	}
	// The first run still streams: its first line is agent:run:start.
	line, err := bufio.NewReader(first.Body).ReadString('\n')
	if err != nil || !strings.Contains(line, `"agent:run:start"`) {
		t.Fatalf("the holding run's stream: %q %v", line, err)
	}
}

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
