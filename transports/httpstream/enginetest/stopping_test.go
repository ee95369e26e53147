package enginetest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/transports/httpstream"
)

// A run the instance refuses because it is stopping is 503 with
// Retry-After before any stream opens, on every run-starting route, so a
// client or a load balancer retries elsewhere.
func TestStoppingInstanceIs503(t *testing.T) {
	e := newEnv(t, setup{})
	_ = e.inst.Stop(context.Background())
	for _, path := range []string{"/agents/writer/run", "/pipelines/p/run", "/resume/cp-1"} {
		for _, accept := range []string{"application/x-ndjson", "text/event-stream"} {
			req, _ := http.NewRequest("POST", e.ts.URL+path, strings.NewReader(`{"input":"hi"}`))
			req.Header.Set("Accept", accept)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			var b struct{ Error core.ClientError }
			_ = json.Unmarshal(body, &b)
			if res.StatusCode != 503 || res.Header.Get("Retry-After") != httpstream.RetryAfter || b.Error.Code != core.CodeInstanceStopping {
				t.Errorf("%s (%s) on a stopping instance = %d Retry-After %q %s", path, accept, res.StatusCode, res.Header.Get("Retry-After"), body)
			}
		}
	}
}
