package cli_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestConsoleServing: bread dev serves the web console at /; bread start
// only with server.console: true.
func TestConsoleServing(t *testing.T) {
	page := func(base string) (int, string) {
		t.Helper()
		res, err := http.Get(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := page(serveInProcess(t, "dev", project(t, basic(nil)))); code != 200 || !strings.Contains(body, "bread console") {
		t.Errorf("bread dev: GET / = %d", code)
	}
	if code, _ := page(serveInProcess(t, "start", project(t, basic(nil)))); code != 404 {
		t.Errorf("bread start without server.console: GET / = %d", code)
	}
	on := basic(map[string]string{"bread.yaml": "entrypoints: [echo]\nstore: {type: sqlite, path: ./bread.db}\nserver: {console: true}\n"})
	if code, body := page(serveInProcess(t, "start", project(t, on))); code != 200 || !strings.Contains(body, "bread console") {
		t.Errorf("bread start with server.console: true: GET / = %d", code)
	}
}
