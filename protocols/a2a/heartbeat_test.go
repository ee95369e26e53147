package a2a_test

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
	a2ap "github.com/breadai/bread/protocols/a2a"
)

// TestQuietStreamsBeat: while a run is silent (here, a model that never
// answers), an open stream gets a `: keep-alive` comment every Heartbeat,
// between events, on both bindings; a JSON answer gets none, and a
// negative Heartbeat sends none.
func TestQuietStreamsBeat(t *testing.T) {
	for _, tc := range []struct {
		name, version, path, method string
		params                      any
	}{
		{"v0.3 message/stream", a2ap.SpecV03, "/a2a", "message/stream",
			map[string]any{"message": map[string]any{"kind": "message", "messageId": "m1", "role": "user", "parts": []any{map[string]any{"kind": "text", "text": "go"}}}}},
		{"v1.0 SendStreamingMessage", a2ap.SpecV1, "/a2a/v1", "SendStreamingMessage", v1Text("go")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, heartbeat := range []time.Duration{20 * time.Millisecond, -1} {
				reached := make(chan struct{})
				s := newStack(t, setup{opts: a2ap.Options{SpecVersion: tc.version, URL: tc.path, Heartbeat: heartbeat},
					agents: []*core.Agent{scripted("assistant", modeltest.Block(reached, "thinking"))}})
				ctx, cancel := context.WithCancel(t.Context())
				body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": tc.method, "params": tc.params})
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url+tc.path, strings.NewReader(string(body)))
				req.Header.Set("Content-Type", "application/json")
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				<-reached
				lines := make(chan string)
				go func() {
					defer close(lines)
					sc := bufio.NewScanner(res.Body)
					for sc.Scan() {
						lines <- sc.Text()
					}
				}()
				events, beats := 0, 0
				if heartbeat > 0 {
					// Three beats after the first events: the stream stays
					// well formed around them.
					// A generous guard, so a stream that never beats fails
					// instead of hanging the test.
					guard := time.After(30 * time.Second)
				beat:
					for beats < 3 {
						var line string
						select {
						case l, ok := <-lines:
							if !ok {
								break beat
							}
							line = l
						case <-guard:
							t.Error("no beat in 30 s")
							break beat
						}
						switch {
						case strings.HasPrefix(line, "data: "):
							if beats > 0 {
								t.Errorf("an event after the beats began: %s", line)
							}
							events++
						case line == ": keep-alive":
							beats++
						case line == "" || strings.HasPrefix(line, "id: "):
						default:
							t.Errorf("a line that is neither an event nor a beat: %q", line)
						}
					}
					if events == 0 || beats != 3 {
						t.Errorf("%d events and %d beats", events, beats)
					}
				} else {
					// A negative Heartbeat: no beat in 10 periods of the
					// other case's.
					timeout := time.After(200 * time.Millisecond)
				read:
					for {
						select {
						case line := <-lines:
							if strings.HasPrefix(line, ":") {
								t.Errorf("a beat with heartbeats off: %q", line)
							}
						case <-timeout:
							break read
						}
					}
				}
				cancel()
				res.Body.Close()
				for range lines {
				}
			}
		})
	}
}
