package server_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/breadai/bread/server"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// The access log has a line per request with its status, and never the
// query, a header or the body.
func TestAccessLogNeverLogsSecrets(t *testing.T) {
	f := newFixture(t, fakeConfig{})
	var buf syncBuf
	ts := f.serve(t, server.Options{AccessLog: true, Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	do(t, ts.URL, "POST", "/agents/writer/run?token=secret-q", `{"input":"secret-body"}`, "Authorization", "Bearer secret-h", "Cookie", "s=secret-c")
	do(t, ts.URL, "GET", "/nope", "")
	log := buf.String()
	if !strings.Contains(log, `"path":"/agents/writer/run"`) || !strings.Contains(log, `"status":200`) || !strings.Contains(log, `"status":404`) {
		t.Fatalf("access log lacks the requests: %s", log)
	}
	if strings.Contains(log, "secret") {
		t.Fatalf("access log leaks a secret: %s", log)
	}
}
