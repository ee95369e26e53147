package cli_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine"
)

// bread.yaml's webhooks section reaches the engine: a background run
// started on `bread start` POSTs its record to the webhook, signed with the
// configured secret; without allowPrivateNetworks the same loopback
// receiver is refused before the run.
func TestBackgroundRunWebhookFromBreadYAML(t *testing.T) {
	got := make(chan []byte, 1)
	sig := make(chan string, 1)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		sig <- r.Header.Get(engine.SignatureHeader)
		got <- b
	}))
	defer recv.Close()
	files := basic(nil)
	files["bread.yaml"] += "webhooks: {secret: s3cret, allowPrivateNetworks: true}\n"
	s := serve(t, project(t, files))
	res, body := s.post(t, "/agents/echo/run", `{"input":"hi","background":true,"webhook":"`+recv.URL+`"}`, "")
	var run core.Detached
	if res.StatusCode != http.StatusAccepted || json.Unmarshal([]byte(body), &run) != nil {
		t.Fatalf("POST = %d %s", res.StatusCode, body)
	}
	select {
	case b := <-got:
		h := <-sig
		ts, _, _ := strings.Cut(strings.TrimPrefix(h, "t="), ",")
		var unix int64
		_ = json.Unmarshal([]byte(ts), &unix)
		if h != engine.SignWebhook("s3cret", time.Unix(unix, 0), b) {
			t.Fatalf("signature %q does not verify", h)
		}
		var rec core.RunRecord
		if err := json.Unmarshal(b, &rec); err != nil || rec.ID != run.RunID || rec.Status != core.RunCompleted {
			t.Fatalf("delivery %s", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook delivery")
	}

	files = basic(nil)
	files["bread.yaml"] += "webhooks: {secret: s3cret}\n"
	s = serve(t, project(t, files))
	if res, body := s.post(t, "/agents/echo/run", `{"input":"hi","background":true,"webhook":"`+recv.URL+`"}`, ""); res.StatusCode != 400 || !strings.Contains(body, core.CodeValidationError) {
		t.Fatalf("a loopback webhook without allowPrivateNetworks: %d %s", res.StatusCode, body)
	}
}
