package httpstream_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
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
