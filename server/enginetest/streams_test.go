package enginetest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/server"
	"github.com/breadai/bread/transports/httpstream"
)

// With no options at all, a server streams both formats on the same
// routes.
func TestEveryServerStreamsBothFormats(t *testing.T) {
	f := newFixture(t, engine.Config{}, modeltest.Text("a"), modeltest.Text("b"))
	ts := f.serve(t, server.Options{})
	for _, c := range []struct{ accept, want, prefix string }{
		{"", "application/x-ndjson", `{"v":1,"type":"crumb","runId":"`},
		{"text/event-stream", "text/event-stream", "retry: 3000\n\nid: 1\n\ndata: {\"type\":\"agent:run:start\""},
	} {
		var hdr []string
		if c.accept != "" {
			hdr = []string{"Accept", c.accept}
		}
		r := do(t, ts.URL, "POST", "/agents/writer/run", `{"input":"hi"}`, hdr...)
		if r.status != 200 || r.header.Get("Content-Type") != c.want || r.header.Get("Vary") != "Accept" || !strings.HasPrefix(string(r.body), c.prefix) {
			t.Fatalf("Accept %q: %d %q vary %q\n%s", c.accept, r.status, r.header.Get("Content-Type"), r.header.Get("Vary"), r.body)
		}
	}
}

// open starts a streamed request and returns its line reader.
func open(t *testing.T, method, url, body string, hdr ...string) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
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
	t.Cleanup(func() { res.Body.Close() })
	return res, bufio.NewReader(res.Body)
}

// Options.Streams reaches the streaming routes (heartbeat, AuthorizeStream)
// and AuthorizeStream guards the cancel route too.
func TestStreamsOptions(t *testing.T) {
	reached := make(chan struct{})
	f := newFixture(t, engine.Config{}, modeltest.Block(reached, "half"))
	ts := f.serve(t, server.Options{
		Auth: &server.Auth{Strategies: []core.BreadAuthStrategy{headerAuth{}}, Authorize: func(context.Context, *core.AuthIdentity, string, map[string]string) bool { return true }},
		Streams: httpstream.Options{
			Heartbeat: 10 * time.Millisecond,
			AuthorizeStream: func(_ context.Context, id *core.AuthIdentity, _ string) bool {
				return id != nil && id.Subject == "alice"
			},
		},
	})
	_, lines := open(t, "POST", ts.URL+"/agents/writer/run", `{"input":"hi"}`, "X-Identity", "alice")
	first, err := lines.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var frame struct{ RunID string }
	if err := json.Unmarshal(first, &frame); err != nil || frame.RunID == "" {
		t.Fatalf("first frame %s", first)
	}
	<-reached
	for _, path := range []string{"/runs/" + frame.RunID + "/stream", "/runs/" + frame.RunID + "/cancel"} {
		method := "GET"
		if strings.HasSuffix(path, "cancel") {
			method = "POST"
		}
		if r := do(t, ts.URL, method, path, "", "X-Identity", "bob"); r.status != 403 || string(r.body) != server.ForbiddenBody {
			t.Fatalf("bob %s %s = %d %s", method, path, r.status, r.body)
		}
	}
	_, tail := open(t, "GET", ts.URL+"/runs/"+frame.RunID+"/stream", "", "X-Identity", "alice", "Accept", "text/event-stream")
	beats := 0
	for beats < 3 {
		line, err := tail.ReadString('\n')
		if err != nil {
			t.Fatalf("the tail ended while the run was idle: %v", err)
		}
		if line == ": ping\n" {
			beats++
		}
	}
	// Alice cancels: the run's own stream ends with RUN_CANCELLED.
	if r := do(t, ts.URL, "POST", "/runs/"+frame.RunID+"/cancel", "", "X-Identity", "alice"); r.status != 200 {
		t.Fatalf("alice cancels = %d %s", r.status, r.body)
	}
	var last string
	for {
		line, err := lines.ReadString('\n')
		if err != nil {
			break
		}
		last = line
	}
	if !strings.Contains(last, `"type":"agent:error"`) || !strings.Contains(last, core.CodeRunCancelled) {
		t.Fatalf("the run's stream ends with %s", last)
	}
}
