package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/breadai/bread/cli"
)

// serveInProcess runs `bread <command>` in-process on a free loopback port
// until the test ends and returns its base URL.
func serveInProcess(t *testing.T, command, dir string) string {
	t.Helper()
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var out, errOut syncWriter
		out.w, errOut.w = &bytes.Buffer{}, &bytes.Buffer{}
		cli.Main(cli.Options{Context: ctx, Args: []string{command, "-p", strconv.Itoa(port), "-H", "127.0.0.1", "--cwd", dir},
			Stdout: &out, Stderr: &errOut, LookupEnv: func(string) (string, bool) { return "", false }})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the server ignored its cancelled context")
		}
	})
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	waitHTTP(t, base+"/agents")
	return base
}

// TestEvalsRoute: bread start serves POST /agents/{id}/evals with the
// project's eval suites, scored as `bread eval` scores them.
func TestEvalsRoute(t *testing.T) {
	files := basic(map[string]string{
		"agents/echo/evals/good.eval.yaml": "cases:\n  - name: says hello\n    input: hi\n    scorers:\n      - {type: contains, expected: Hello}\n      - {type: custom, command: \"grep -q there\"}\n  - name: shouts\n    input: hi\n    scorers:\n      - {type: exact, expected: HELLO}\n",
	})
	base := serveInProcess(t, "start", project(t, files))
	res, err := http.Post(base+"/agents/echo/evals", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var rep struct {
		AgentID string `json:"agentId"`
		Passed  int    `json:"passed"`
		Total   int    `json:"total"`
		Results []struct {
			Case     string   `json:"case"`
			Passed   bool     `json:"passed"`
			Problems []string `json:"problems"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &rep); err != nil || res.StatusCode != 200 {
		t.Fatalf("POST /agents/echo/evals = %d %s", res.StatusCode, body)
	}
	if rep.AgentID != "echo" || rep.Passed != 1 || rep.Total != 2 || rep.Results[0].Case != "says hello" || !rep.Results[0].Passed ||
		rep.Results[1].Passed || len(rep.Results[1].Problems) != 1 {
		t.Fatalf("report = %s", body)
	}

	base = serveInProcess(t, "start", project(t, basic(nil)))
	res, err = http.Post(base+"/agents/echo/evals", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 404 || !bytes.Contains(body, []byte(`"EVALS_NOT_FOUND"`)) {
		t.Fatalf("no suites = %d %s", res.StatusCode, body)
	}
}
